// A created workload is stored with the status the API server gives it before any controller writes:
// its v1 type's fields without omitempty at zero (a ReplicaSet's replicas, a DaemonSet's four counts),
// whatever status the client sent.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import { objectStrategies } from '../../src/kubeapi/strategies.js';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'busybox' }] } };
const selector = { matchLabels: { app: 'web' } };

const cases: { kind: string; apiVersion: string; spec: unknown; status: unknown }[] = [
  { kind: 'Deployment', apiVersion: 'apps/v1', spec: { selector, template }, status: {} },
  { kind: 'ReplicaSet', apiVersion: 'apps/v1', spec: { selector, template }, status: { replicas: 0 } },
  { kind: 'StatefulSet', apiVersion: 'apps/v1', spec: { selector, template, serviceName: 'web' }, status: { replicas: 0, availableReplicas: 0 } },
  {
    kind: 'DaemonSet',
    apiVersion: 'apps/v1',
    spec: { selector, template },
    status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
  },
  { kind: 'Job', apiVersion: 'batch/v1', spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } }, status: {} },
  {
    kind: 'CronJob',
    apiVersion: 'batch/v1',
    spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } } },
    status: {},
  },
];

for (const c of cases) {
  test(`a new ${c.kind} is stored with the API server's initial status, not the one sent`, async () => {
    const store = new ObjectStore({ kinds: [...objectStrategies] });
    const created = (await store.create(c.kind, {
      apiVersion: c.apiVersion,
      kind: c.kind,
      metadata: { name: 'web', namespace: 'default' },
      spec: c.spec,
      status: c.kind === 'Job' ? { active: 7 } : c.kind === 'CronJob' ? { active: [{ name: 'x' }] } : { observedGeneration: 7 },
    })) as { status?: unknown };
    assert.deepEqual(created.status, c.status);
    assert.deepEqual((store.get(c.kind, 'default', 'web') as { status?: unknown }).status, c.status);
  });
}
