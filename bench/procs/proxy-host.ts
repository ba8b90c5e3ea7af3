// The service proxy alone in its process, as the agent holds it: ServiceProxy over an object store
// holding one Service (an echo port and a sink port) whose Endpoints name the bench's endpoint
// process, so connections to <clusterIP>:<port> cross a process boundary each way as they do on a host.

import { connect } from 'node:net';
import { ObjectStore } from '../../src/agent/object-store.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { ServiceProxy } from '../../src/proxy/service-proxy.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { serve } from '../lib/child-server.js';
import type { ProxyEndpointsStart } from './proxy-endpoints.js';

export type ProxyHostParams = ProxyEndpointsStart;

export interface ProxyHostStart {
  clusterIP: string;
  echoPort: number;
  sinkPort: number;
}

const servicePorts = { echo: 18900, sink: 18901 };

/** Whether a TCP connection to host:port is accepted (closed again at once). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function until(cond: () => Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 5));
}

async function main(): Promise<void> {
  const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(defaultServiceNetwork()))] });
  const proxy = new ServiceProxy({ objects, clock: new RealClock(), logger: streamLogger(process.stderr, 'error') });

  async function start(p: ProxyHostParams): Promise<ProxyHostStart> {
    proxy.start();
    const svc = (await objects.create('Service', {
      metadata: { name: 'bench', namespace: 'default' },
      spec: {
        ports: [
          { name: 'echo', port: servicePorts.echo },
          { name: 'sink', port: servicePorts.sink },
        ],
      },
    })) as { spec: { clusterIP: string } };
    await objects.create('Endpoints', {
      metadata: { name: 'bench', namespace: 'default' },
      subsets: [
        {
          addresses: [{ ip: '127.0.0.1' }],
          ports: [
            { name: 'echo', port: p.echoPort },
            { name: 'sink', port: p.sinkPort },
          ],
        },
      ],
    });
    while (proxy.listening().length < 2) await new Promise((r) => setTimeout(r, 5));
    for (const port of Object.values(servicePorts)) await until(() => accepts(svc.spec.clusterIP, port));
    return { clusterIP: svc.spec.clusterIP, echoPort: servicePorts.echo, sinkPort: servicePorts.sink };
  }

  const close = async () => proxy.stop();
  serve({ start, stop: close }, close);
}

await main();
