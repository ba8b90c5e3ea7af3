// exec, attach and port-forward over WebSocket (`ws`): the channel protocols v1–v5.channel.k8s.io,
// where every binary message starts with its channel (0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize;
// v5 adds 255 <channel> to close a channel), and port-forward's data/error channel pairs per port,
// each opened by the port as two little-endian bytes. SPDY tunnelled in WebSocket
// (`SPDY/3.1+portforward.k8s.io`, kubectl ≥ 1.30) is handed to the SPDY port-forward.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { createWebSocketStream, WebSocketServer, type WebSocket } from 'ws';
import type { StreamOptions } from '../kubeapi/backend.js';
import type { ExecSession } from '../runtime/streams.js';
import { CH_CLOSE, CH_ERROR, CH_RESIZE, CH_STDERR, CH_STDIN, CH_STDOUT, framed } from './channels.js';
import { exitStatus } from '../runtime/streams.js';
import { applyResize, outcome } from './remotecommand.js';
import { spdyPortForward } from './spdy-handlers.js';

export const wsExecProtocols = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
export const wsPortForwardProtocols = ['SPDY/3.1+portforward.k8s.io', 'v4.channel.k8s.io', 'portforward.k8s.io', 'channel.k8s.io'];

function upgradeWS(req: IncomingMessage, socket: Duplex, head: Buffer, supported: readonly string[]): Promise<WebSocket> {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (offered) => [...offered].find((p) => supported.includes(p)) ?? false,
  });
  return new Promise((resolve) => wss.handleUpgrade(req, socket, head, (ws) => resolve(ws)));
}

/** Pause between the exit Status and the close frame (see wsExec). */
const CLOSE_AFTER_STATUS_MS = 50;

export async function wsExec(req: IncomingMessage, socket: Duplex, head: Buffer, opts: StreamOptions, start: () => Promise<ExecSession>): Promise<void> {
  const ws = await upgradeWS(req, socket, head, wsExecProtocols);
  const protocol = ws.protocol || 'channel.k8s.io';
  ws.on('error', () => ws.terminate());
  let exec: ExecSession;
  const pending: Buffer[] = [];
  let deliver = (m: Buffer) => void pending.push(m);
  ws.on('message', (m: Buffer, isBinary: boolean) => deliver(isBinary ? m : Buffer.from(m)));
  const finish = (status: Record<string, unknown>) => {
    const ok = status.status === 'Success';
    const message =
      protocol === 'v4.channel.k8s.io' || protocol === 'v5.channel.k8s.io' || protocol === 'v3.channel.k8s.io'
        ? JSON.stringify(status)
        : ok
          ? undefined
          : String(status.message ?? '');
    if (message === undefined) return ws.close(1000);
    // The close follows the status after a pause: a client polling its TLS socket with select() (the
    // Python client) reads one frame per wake-up, and a close frame that arrived in the same read as
    // the status would wait in its TLS buffer, unseen, until its own timeout.
    ws.send(framed(CH_ERROR, message), () => setTimeout(() => ws.close(1000), CLOSE_AFTER_STATUS_MS).unref());
  };
  try {
    exec = await start();
  } catch (err) {
    finish(exitStatus(err instanceof Error ? err : new Error(String(err)), opts.command));
    return;
  }
  ws.on('close', () => exec.kill());
  deliver = (m: Buffer) => {
    if (m.length === 0) return;
    const ch = m[0]!;
    const body = m.subarray(1);
    if (ch === CH_STDIN) exec.stdin?.write(body);
    else if (ch === CH_RESIZE) applyResize(exec, body.toString('utf8'));
    else if (ch === CH_CLOSE && body[0] === CH_STDIN) exec.stdin?.end();
  };
  for (const m of pending.splice(0)) deliver(m);
  const outs: Promise<void>[] = [];
  const pump = (from: NodeJS.ReadableStream | undefined, ch: number) => {
    if (!from) return;
    outs.push(
      new Promise((resolve) => {
        from.on('data', (d: Buffer) => ws.readyState === ws.OPEN && ws.send(framed(ch, d)));
        from.on('end', resolve);
        from.on('error', resolve);
        from.on('close', resolve);
      }),
    );
  };
  if (opts.stdout) pump(exec.stdout, CH_STDOUT);
  else exec.stdout?.resume();
  if (opts.stderr) pump(exec.stderr, CH_STDERR);
  else exec.stderr?.resume();
  const result = await outcome(exec);
  await Promise.all(outs);
  if (ws.readyState === ws.OPEN) finish(exitStatus(result, opts.command));
}

export async function wsPortForward(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  ports: number[],
  dial: (port: number) => Promise<Duplex>,
): Promise<void> {
  const ws = await upgradeWS(req, socket, head, wsPortForwardProtocols);
  ws.on('error', () => ws.terminate());
  if (ws.protocol === 'SPDY/3.1+portforward.k8s.io') {
    const tunnel = createWebSocketStream(ws);
    tunnel.on('error', () => tunnel.destroy());
    spdyPortForward(tunnel, Buffer.alloc(0), dial);
    return;
  }
  const conns: Array<Duplex | undefined> = [];
  const pending: Array<Buffer[]> = ports.map(() => []);
  ws.on('message', (m: Buffer) => {
    if (m.length === 0) return;
    const ch = m[0]!;
    const i = ch >> 1;
    if (ch % 2 !== 0 || i >= ports.length) return;
    const body = m.subarray(1);
    if (conns[i]) conns[i]!.write(body);
    else pending[i]!.push(body);
  });
  const closeAll = () => conns.forEach((c) => c?.destroy());
  ws.on('close', closeAll);
  ports.forEach((port, i) => {
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(port);
    ws.send(framed(2 * i, portBytes));
    ws.send(framed(2 * i + 1, portBytes));
    dial(port).then(
      (conn) => {
        conns[i] = conn;
        for (const b of pending[i]!.splice(0)) conn.write(b);
        conn.on('data', (d: Buffer) => ws.readyState === ws.OPEN && ws.send(framed(2 * i, d)));
        conn.on('error', (err) => ws.readyState === ws.OPEN && ws.send(framed(2 * i + 1, `error forwarding port ${port}: ${err.message}`)));
        conn.on('close', () => ws.readyState === ws.OPEN && ws.close(1000));
      },
      (err: Error) => {
        if (ws.readyState === ws.OPEN) {
          ws.send(framed(2 * i + 1, `error forwarding port ${port} to pod: ${err.message}`));
          ws.close(1000);
        }
      },
    );
  });
}
