// The upgrade handler for pods/exec, pods/attach and pods/portforward: checks the pod and options,
// then serves the request over WebSocket or SPDY/3.1, whichever the client asked for.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { KubeBackend } from '../kubeapi/backend.js';
import { ApiError, rawStatusResponse, statusOf } from '../http/status.js';
import { execOptions } from './remotecommand.js';
import { negotiate, portForwardProtocol, spdyExec, spdyExecProtocols, spdyPortForward, switchToSpdy } from './spdy-handlers.js';
import { wsExec, wsPortForward } from './websocket-handlers.js';

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

const pathRe = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/;

/** Answers a refused upgrade with a plain HTTP Status response and closes the socket. */
function refuse(socket: Duplex, err: unknown): void {
  socket.end(rawStatusResponse(statusOf(err)));
}

export function createStreamingUpgradeHandler(backend: KubeBackend): UpgradeHandler {
  return (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = pathRe.exec(url.pathname);
    if (!m) return false;
    socket.on('error', () => socket.destroy());
    try {
      const ns = decodeURIComponent(m[1]!);
      const name = decodeURIComponent(m[2]!);
      const sub = m[3]!;
      const pod = backend.getPod(ns, name);
      if (!pod) throw new ApiError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
      const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
      const isWS = upgrade === 'websocket';
      if (!isWS && upgrade !== 'spdy/3.1') throw new ApiError(400, 'BadRequest', `unsupported upgrade protocol "${req.headers.upgrade ?? ''}"`);
      const dial = (port: number) => backend.portForward(ns, name, port);

      if (sub === 'portforward') {
        if (isWS) {
          const raw = url.searchParams.getAll('ports').flatMap((p) => p.split(','));
          if (raw.length === 0) throw new ApiError(400, 'BadRequest', 'query parameter "ports" is required');
          const ports = raw.map((p) => Number(p));
          if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) throw new ApiError(400, 'BadRequest', `invalid port in "${raw.join(',')}"`);
          void wsPortForward(req, socket, head, ports, dial);
          return true;
        }
        const proto = negotiate(req, [portForwardProtocol]);
        if (!proto)
          throw new ApiError(
            403,
            'Forbidden',
            `unable to upgrade: unable to negotiate protocol: client supports ${String(req.headers['x-stream-protocol-version'] ?? '')}, server supports ${portForwardProtocol}`,
          );
        switchToSpdy(socket, proto);
        spdyPortForward(socket, head, dial);
        return true;
      }

      const containers = pod.spec?.containers ?? [];
      const opts = execOptions(url.searchParams, containers[0]?.name ?? '', sub === 'attach');
      const all = [...containers, ...(pod.spec?.initContainers ?? [])];
      if (!all.some((c) => c.name === opts.container)) throw new ApiError(400, 'BadRequest', `container ${opts.container} is not valid for pod ${name}`);
      if (sub === 'exec' && opts.command.length === 0) throw new ApiError(400, 'BadRequest', 'you must specify at least 1 command');
      if (!opts.stdin && !opts.stdout && !opts.stderr) throw new ApiError(400, 'BadRequest', 'you must specify at least 1 of stdin, stdout, stderr');
      if (opts.tty && opts.stderr) opts.stderr = false;
      const start = () =>
        sub === 'exec'
          ? backend.exec(ns, name, opts)
          : backend.attach(ns, name, { container: opts.container, stdin: opts.stdin, stdout: opts.stdout, stderr: opts.stderr, tty: opts.tty });
      if (isWS) {
        void wsExec(req, socket, head, opts, start);
        return true;
      }
      const proto = negotiate(req, spdyExecProtocols);
      if (!proto)
        throw new ApiError(
          403,
          'Forbidden',
          `unable to upgrade: unable to negotiate protocol: client supports ${String(req.headers['x-stream-protocol-version'] ?? '')}, server supports ${spdyExecProtocols.join(', ')}`,
        );
      switchToSpdy(socket, proto);
      spdyExec(socket, head, proto, opts, start);
      return true;
    } catch (err) {
      refuse(socket, err);
      return true;
    }
  };
}
