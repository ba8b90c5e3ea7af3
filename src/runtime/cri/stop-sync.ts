// CRI StopPodSandbox for the last moment of a process that exits without a graceful stop (a second
// Ctrl-C): the calls are made synchronously, by a short-lived node child that speaks gRPC over HTTP/2
// with built-in modules only, so they reach any CRI runtime before the caller is gone.

import { spawnSync } from 'node:child_process';
import { socketPathOf } from './proto.js';

/**
 * The child: argv = socket path, then sandbox ids. One StopPodSandbox each (the request's only field,
 * pod_sandbox_id = 1, encoded by hand), all on one HTTP/2 connection; exits once every call ended.
 */
const CHILD = `
const http2 = require('node:http2');
const net = require('node:net');
const [socketPath, ...ids] = process.argv.slice(1);
const session = http2.connect('http://localhost', { createConnection: () => net.connect(socketPath) });
session.on('error', () => process.exit(1));
let left = ids.length;
const done = () => { if (--left === 0) session.close(); };
for (const id of ids) {
  const value = Buffer.from(id, 'utf8');
  const msg = Buffer.concat([Buffer.from([0x0a]), varint(value.length), value]);
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(msg.length, 1);
  const req = session.request({ ':method': 'POST', ':path': '/runtime.v1.RuntimeService/StopPodSandbox', 'content-type': 'application/grpc', te: 'trailers' });
  req.on('data', () => {});
  req.on('close', done);
  req.on('error', () => {});
  req.end(Buffer.concat([frame, msg]));
}
if (left === 0) session.close();
function varint(n) {
  const out = [];
  while (n > 0x7f) { out.push((n & 0x7f) | 0x80); n >>>= 7; }
  out.push(n);
  return Buffer.from(out);
}
`;

/**
 * Stops the given pod sandboxes of the CRI runtime on endpoint (every container of each SIGKILLed, as
 * StopPodSandbox does) and returns once the runtime answered, or after timeoutMs.
 */
export function stopPodSandboxesSync(endpoint: string, podSandboxIds: Iterable<string>, timeoutMs = 10_000): void {
  const ids = [...podSandboxIds];
  if (ids.length === 0) return;
  spawnSync(process.execPath, ['-e', CHILD, socketPathOf(endpoint), ...ids], { stdio: 'ignore', timeout: timeoutMs });
}
