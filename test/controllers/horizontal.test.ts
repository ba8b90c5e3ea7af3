// The HPA controller's reconcile on an injected clock and a real object store (pods and their
// metrics are stand-ins the test sets: no pod runs): nothing before the first sync period, a rescale
// of the Deployment's scale with upstream's event and status, ScalingActive False with upstream's
// reason and message when metrics are gone, FailedGetScale for a missing target.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HorizontalPodAutoscaler } from '../../src/api/autoscaling.js';
import type { Pod } from '../../src/api/types.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import { ControllerContext } from '../../src/controllers/context.js';
import { HorizontalController } from '../../src/controllers/horizontal.js';
import { EventStore } from '../../src/events/store.js';
import type { KubeBackend } from '../../src/kubeapi/backend.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

function harness(t: { after(fn: () => void): void }) {
  const clock = new FakeClock();
  const start = new Date(clock.now()).toISOString();
  const store = new ObjectStore({ now: () => clock.now() });
  const usage = new Map<string, number>();
  const pods: Pod[] = ['a', 'b'].map((n) => ({
    metadata: { name: `web-${n}`, namespace: 'default', uid: n, labels: { app: 'web' }, resourceVersion: '1' },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }] },
    status: { phase: 'Running', startTime: start, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: start }] },
  })) as Pod[];
  const backend = {
    nodeName: 'node',
    objects: store,
    watchPods: (_rv: string, on: (ev: { type: string; object: Pod }) => void) => {
      for (const p of pods) on({ type: 'ADDED', object: p });
      return { stop() {} };
    },
    podMetrics: (_ns: string, name: string) => {
      const cores = usage.get(name);
      if (cores === undefined) return undefined;
      return { timestamp: new Date(clock.now()).toISOString(), window: '15s', containers: [{ name: 'c', cpuCores: cores, memoryBytes: 1 << 20 }] };
    },
  } as unknown as KubeBackend;
  const events = new EventStore({ clock, host: 'node' });
  const ctx = new ControllerContext(backend, clock, silentLogger, events);
  const controller = new HorizontalController(ctx);
  ctx.start();
  t.after(() => ctx.stop());
  const settle = async (ms: number) => {
    await clock.advance(ms);
    await ctx.idle();
    await clock.advance(0);
    await ctx.idle();
  };
  return { clock, store, usage, events, controller, settle };
}

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  },
};

const hpa = (target = 'web') => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target },
    maxReplicas: 10,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
  },
});

const conditions = (h: HorizontalPodAutoscaler) => (h.status?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`);

test('two pods at 90 % of a 50 % target: after one sync period the Deployment is scaled to 4, with upstream’s event and status', async (t) => {
  // Pods started 10 minutes before the first sync: past the cpu initialization period.
  const h = harness(t);
  await h.settle(10 * 60_000);
  await h.store.create('Deployment', deployment);
  h.usage.set('web-a', 0.9).set('web-b', 0.9);
  await h.store.create('HorizontalPodAutoscaler', hpa());
  await h.settle(14_000);
  assert.equal((h.store.get('Deployment', 'default', 'web') as typeof deployment).spec.replicas, 2);
  await h.settle(1_000);
  assert.equal((h.store.get('Deployment', 'default', 'web') as typeof deployment).spec.replicas, 4);
  const got = h.store.get('HorizontalPodAutoscaler', 'default', 'web') as HorizontalPodAutoscaler;
  assert.equal(got.status?.currentReplicas, 2);
  assert.equal(got.status?.desiredReplicas, 4);
  assert.deepEqual(got.status?.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '900m' } } }]);
  assert.equal(got.status?.lastScaleTime, new Date(h.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  assert.deepEqual(conditions(got), [
    'AbleToScale=True/SucceededRescale: the HPA controller was able to update the target scale to 4',
    'ScalingActive=True/ValidMetricFound: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
    'ScalingLimited=False/DesiredWithinRange: the desired count is within the acceptable range',
  ]);
  const rescale = h.events.list().find((e) => e.reason === 'SuccessfulRescale');
  assert.equal(rescale?.message, 'New size: 4; reason: cpu resource utilization (percentage of request) above target');
  assert.equal(rescale?.involvedObject.kind, 'HorizontalPodAutoscaler');

  // Metrics gone: no proposal, ScalingActive False in upstream's words; the scale is left alone.
  h.usage.clear();
  await h.settle(15_000);
  const after = h.store.get('HorizontalPodAutoscaler', 'default', 'web') as HorizontalPodAutoscaler;
  assert.ok(
    conditions(after).includes(
      'ScalingActive=False/FailedGetResourceMetric: the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    ),
  );
  assert.equal((h.store.get('Deployment', 'default', 'web') as typeof deployment).spec.replicas, 4);
});

test('a target that does not exist: AbleToScale False/FailedGetScale and a FailedGetScale event', async (t) => {
  const h = harness(t);
  await h.store.create('HorizontalPodAutoscaler', hpa('nope'));
  await h.settle(15_000);
  const got = h.store.get('HorizontalPodAutoscaler', 'default', 'web') as HorizontalPodAutoscaler;
  assert.deepEqual(conditions(got), [
    'AbleToScale=False/FailedGetScale: the HPA controller was unable to get the target\'s current scale: deployments.apps "nope" not found',
  ]);
  assert.equal(h.events.list().find((e) => e.reason === 'FailedGetScale')?.message, 'deployments.apps "nope" not found');
});
