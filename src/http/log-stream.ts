// A container log served over HTTP as the kubelet and the API server serve it: chunked text/plain,
// streamed until the log ends or the client goes away (the kubelet's containerLogs handler).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

/** Streams a log (chunked text) until it ends or the client goes away. */
export function pipeLog(req: IncomingMessage, res: ServerResponse, stream: Readable): void {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
  const stop = () => stream.destroy();
  req.on('close', stop);
  res.on('close', stop);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
