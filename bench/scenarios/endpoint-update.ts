// endpoint-update: how long a readiness change takes to reach a Service's Endpoints. SIZE pods back
// one Service; one pod at a time turns unready (then Ready again) in the pod source the endpoints
// controller watches (as the agent's backend reports a status change), and the delay until the
// stored Endpoints show the change is measured through a watch of them, p50/p99 (target p99 ≤ 1 s).

import type { Pod } from '../../src/api/types.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import { EndpointsController, type PodSource } from '../../src/controllers/endpoints/controller.js';
import type { WatchEvent } from '../../src/kubeapi/backend.js';
import { defaultServiceNetwork, ServiceAllocator } from '../../src/kubeapi/service-allocator.js';
import { objectStrategies, serviceStrategy } from '../../src/kubeapi/strategies.js';
import { streamLogger } from '../../src/util/logger.js';
import { distribution, preciseNow } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { Scenario } from './types.js';

/** Pods the controller watches, changed by the scenario as the agent's status updates change them. */
class BenchPods implements PodSource {
  private readonly listeners = new Set<(ev: WatchEvent<Pod>) => void>();
  readonly pods = new Map<string, Pod>();

  watchPods(_rv: string, onEvent: (ev: WatchEvent<Pod>) => void) {
    for (const object of this.pods.values()) onEvent({ type: 'ADDED', object });
    this.listeners.add(onEvent);
    return { stop: () => this.listeners.delete(onEvent) };
  }

  set(pod: Pod, type: 'ADDED' | 'MODIFIED'): void {
    this.pods.set(pod.metadata!.name!, pod);
    for (const l of this.listeners) l({ type, object: pod });
  }
}

function benchPod(i: number, ready: boolean): Pod {
  const status = ready ? 'True' : 'False';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `ep-${i}`, namespace: 'default', uid: `uid-${i}`, labels: { app: 'ep' }, resourceVersion: '1' },
    spec: { nodeName: 'bench', containers: [{ name: 'c', image: 'none', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running',
      podIP: `10.85.${i >> 8}.${i & 255}`,
      conditions: [
        { type: 'Ready', status },
        { type: 'ContainersReady', status },
      ],
    },
  };
}

export const endpointUpdate: Scenario = {
  name: 'endpoint-update',
  defaultSizes: [10, 100],
  sizeIsPods: false,
  async run(n, ctx): Promise<ScenarioResult> {
    const objects = new ObjectStore({ kinds: [...objectStrategies, serviceStrategy(new ServiceAllocator(defaultServiceNetwork()))] });
    const pods = new BenchPods();
    for (let i = 0; i < n; i++) pods.set(benchPod(i, true), 'ADDED');
    const controller = new EndpointsController({ pods, objects, logger: streamLogger(process.stderr, 'error') });
    controller.start();
    ctx.defer(() => controller.stop());
    await objects.create('Service', {
      metadata: { name: 'ep', namespace: 'default' },
      spec: { selector: { app: 'ep' }, ports: [{ port: 80, targetPort: 'http' }] },
    });

    // The Ready addresses of the Endpoints, as a watcher (the service proxy, the DNS) sees them.
    let readyCount = -1;
    let changed: (() => void) | undefined;
    const watch = objects.storage('Endpoints')!.watch!('', (ev) => {
      const subsets = (ev.object as { subsets?: Array<{ addresses?: unknown[] }> }).subsets ?? [];
      readyCount = subsets.reduce((s, x) => s + (x.addresses?.length ?? 0), 0);
      changed?.();
    });
    ctx.defer(() => watch.stop());
    const until = (want: number) =>
      new Promise<void>((resolve) => {
        if (readyCount === want) return resolve();
        changed = () => {
          if (readyCount === want) {
            changed = undefined;
            resolve();
          }
        };
      });
    await until(n);

    const flips = 200;
    ctx.log(`endpoint-update ${n} pods: ${flips} readiness changes`);
    const delays: number[] = [];
    for (let k = 0; k < flips; k++) {
      const i = Math.floor(k / 2) % n;
      const ready = k % 2 === 1;
      const start = preciseNow();
      pods.set(benchPod(i, ready), 'MODIFIED');
      await until(ready ? n : n - 1);
      delays.push(preciseNow() - start);
    }
    const d = distribution(delays);
    return {
      scenario: 'endpoint-update',
      size: n,
      figures: [
        figure('endpoint_update_p50_ms', `Endpoints updated after a readiness change, p50 (${n} pods)`, 'ms', d.p50, null),
        figure('endpoint_update_p99_ms', `Endpoints updated after a readiness change, p99 (${n} pods)`, 'ms', d.p99, null, {
          text: '≤ 1000 ms',
          on: 'agent',
          op: '<=',
          value: 1000,
        }),
      ],
      notes: [`${flips} changes, one pod at a time (unready, then Ready again); measured to the Endpoints watch event`],
    };
  },
};
