// The ingress proxy alone in its process, as the agent holds it: IngressProxy over an object store
// holding the built-in IngressClass, one Service whose EndpointSlice names the bench's backend
// process, and an Ingress routing bench.localhost to it; requests cross a process boundary each way.

import { ObjectStore } from '../../src/agent/object-store.js';
import { ingressStrategy } from '../../src/kubeapi/ingress-strategy.js';
import type { KubeObject } from '../../src/kubeapi/backend.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { IngressProxy } from '../../src/proxy/ingress-proxy.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { serve } from '../lib/child-server.js';
import type { IngressBackendStart } from './ingress-backend.js';

export interface IngressHostStart {
  httpPort: number;
}

async function main(): Promise<void> {
  let proxy: IngressProxy | undefined;

  async function start(p: IngressBackendStart): Promise<IngressHostStart> {
    const objects: ObjectStore = new ObjectStore({
      kinds: [
        ...objectStrategies,
        serviceStrategy(new ServiceAllocator(defaultServiceNetwork())),
        ingressStrategy((): readonly KubeObject[] => objects.list('IngressClass').items),
      ],
    });
    proxy = new IngressProxy({ objects, clock: new RealClock(), logger: streamLogger(process.stderr, 'error') });
    const where = await proxy.start();
    await objects.create('Service', { metadata: { name: 'bench', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } });
    await objects.create('EndpointSlice', {
      metadata: { name: 'bench-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'bench' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: p.port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    await objects.create('Ingress', {
      metadata: { name: 'bench', namespace: 'default' },
      spec: {
        rules: [
          { host: 'bench.localhost', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'bench', port: { number: 80 } } } }] } },
        ],
      },
    });
    while (!proxy.served().length || proxy.backendProblem({ namespace: 'default', service: 'bench', port: 80, ingress: '' }) !== undefined)
      await new Promise((r) => setTimeout(r, 5));
    return { httpPort: where.httpPort };
  }

  const close = async () => proxy?.stop();
  serve({ start, stop: close }, close);
}

await main();
