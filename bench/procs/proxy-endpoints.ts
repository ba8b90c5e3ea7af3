// The service-proxy bench's endpoints, in a process of their own as a pod's server is: an echo port
// (every byte sent back, for round trips) and a sink port (reads until the client half-closes, then
// answers the byte count it read and closes, so the client times a whole transfer end to end).

import { createServer, type AddressInfo, type Server } from 'node:net';
import { serve } from '../lib/child-server.js';

export interface ProxyEndpointsStart {
  echoPort: number;
  sinkPort: number;
}

async function main(): Promise<void> {
  const echo = createServer({ noDelay: true }, (c) => {
    c.on('error', () => c.destroy());
    c.pipe(c);
  });
  const sink = createServer({ allowHalfOpen: true }, (c) => {
    let read = 0;
    c.on('error', () => c.destroy());
    c.on('data', (b: Buffer) => (read += b.length));
    c.on('end', () => c.end(`${read}\n`));
  });
  const listen = (srv: Server) => new Promise<number>((r) => srv.listen(0, '127.0.0.1', () => r((srv.address() as AddressInfo).port)));
  const close = async () => {
    for (const srv of [echo, sink]) srv.close();
  };
  serve(
    {
      start: async (): Promise<ProxyEndpointsStart> => ({ echoPort: await listen(echo), sinkPort: await listen(sink) }),
      stop: close,
    },
    close,
  );
}

await main();
