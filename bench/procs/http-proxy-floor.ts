// The floor of an HTTP reverse proxy in Node.js: node:http's server and a kept-alive node:http client,
// every request passed to one backend with its headers and body piped, no routing, no added headers;
// what the ingress proxy's own work (routing, balancing, X-Forwarded-*) is measured against.

import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '../lib/child-server.js';
import type { IngressBackendStart } from './ingress-backend.js';

async function main(): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  let backendPort = 0;
  const server = createServer((req, res) => {
    const up = request({ host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers: req.headers, agent }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  const close = async () => void server.close();
  serve(
    {
      start: (p: unknown) =>
        new Promise<IngressBackendStart>((resolve) => {
          backendPort = (p as IngressBackendStart).port;
          server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as AddressInfo).port }));
        }),
      stop: close,
    },
    close,
  );
}

await main();
