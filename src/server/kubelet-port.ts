// The kubelet port of a node joined to a cluster: HTTPS with the serving certificate, client
// certificates requested and checked against --client-ca-file, and every request (upgrades too)
// through the kubelet's authentication and authorisation filter before the router.

import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { checkKubeletRequest, type AuthOutcome, type KubeletAuthOptions } from './kubelet-auth.js';
import { setRequestInfo, type Router } from '../http/router.js';

export interface KubeletPortOptions {
  router: Router;
  address: string;
  port: number;
  cert: Buffer;
  key: Buffer;
  /** PEM of --client-ca-file; without it client certificates are not asked for. */
  clientCA?: Buffer;
  auth: Omit<KubeletAuthOptions, 'x509'>;
}

export interface KubeletPort {
  port: number;
  close(): Promise<void>;
}

const reasons: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 500: 'Internal Server Error' };

function refuseHTTP(res: ServerResponse, out: Extract<AuthOutcome, { ok: false }>): void {
  res.writeHead(out.code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(`${out.message}\n`);
}

function refuseUpgrade(socket: Duplex, out: Extract<AuthOutcome, { ok: false }>): void {
  const body = `${out.message}\n`;
  socket.end(
    `HTTP/1.1 ${out.code} ${reasons[out.code]}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function listenKubeletPort(o: KubeletPortOptions): Promise<KubeletPort> {
  const auth: KubeletAuthOptions = { ...o.auth, x509: !!o.clientCA };
  const server: Server = createHttpsServer({
    cert: o.cert,
    key: o.key,
    minVersion: 'TLSv1.2',
    ...(o.clientCA ? { ca: o.clientCA, requestCert: true, rejectUnauthorized: false } : {}),
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void checkKubeletRequest(req, auth).then((out) => {
      if (!out.ok) {
        req.resume();
        refuseHTTP(res, out);
        return;
      }
      setRequestInfo(req, { listener: 'tcp', user: out.user });
      return o.router.dispatch(req, res);
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    void checkKubeletRequest(req, auth).then((out) => {
      if (!out.ok) {
        refuseUpgrade(socket, out);
        return;
      }
      setRequestInfo(req, { listener: 'tcp', user: out.user });
      o.router.dispatchUpgrade(req, socket, head);
    });
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.address, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
