// The ingress bench's backend, in a process of its own as a pod's server is: an HTTP/1.1 server with
// keep-alive whose /echo answers a request body with the same bytes, and whose /big answers 64 MB.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '../lib/child-server.js';

export interface IngressBackendStart {
  port: number;
}

export const bigBytes = 64 * 1024 * 1024;

async function main(): Promise<void> {
  const chunk = Buffer.alloc(256 * 1024, 1);
  const server = createServer({ keepAlive: true, noDelay: true } as object, (req, res) => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bigBytes });
      let sent = 0;
      const more = () => {
        while (sent < bigBytes) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  const close = async () => void server.close();
  serve(
    {
      start: () =>
        new Promise<IngressBackendStart>((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as AddressInfo).port }))),
      stop: close,
    },
    close,
  );
}

await main();
