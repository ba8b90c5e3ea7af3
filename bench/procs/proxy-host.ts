// The service proxy alone in its process, as the agent holds it: ServiceProxy over an object store
// holding one Service (an echo port and a sink port) whose Endpoints name the bench's endpoint
// process, so connections to <clusterIP>:<port> cross a process boundary each way as they do on a host.
// In the iptables mode the proxy writes the DNAT rules and the kernel carries the connections.

import { connect } from 'node:net';
import { ObjectStore } from '../../src/agent/object-store.js';
import { defaultServiceNetwork, parseIpv4Range, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { ServiceProxy, type ProxyMode } from '../../src/proxy/service-proxy.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import { serve } from '../lib/child-server.js';
import type { ProxyEndpointsStart } from './proxy-endpoints.js';

export interface ProxyHostParams extends ProxyEndpointsStart {
  /** iptables: the kernel DNATs the ClusterIP ports (as root), on a range and chain of the bench's own. */
  mode: ProxyMode;
}

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
  let proxy: ServiceProxy | undefined;

  async function start(p: ProxyHostParams): Promise<ProxyHostStart> {
    const network = p.mode === 'iptables' ? { ...defaultServiceNetwork(), clusterIPRange: parseIpv4Range('127.98.0.0/24') } : defaultServiceNetwork();
    const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(network))] });
    proxy = new ServiceProxy({ objects, clock: new RealClock(), logger: streamLogger(process.stderr, 'error'), mode: p.mode, natChain: 'PODVISOR-BENCH' });
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
    await proxy.natSettled();
    if (p.mode === 'iptables' && !proxy.natActive()) throw new Error('the iptables mode did not start (root and iptables are needed)');
    return { clusterIP: svc.spec.clusterIP, echoPort: servicePorts.echo, sinkPort: servicePorts.sink };
  }

  const close = async () => proxy?.stop();
  serve({ start, stop: close }, close);
}

await main();
