// scheduling.k8s.io/v1 PriorityClasses in the object store (the system classes, validation, one global
// default, system classes never deleted) and the Priority admission of pods: priorityClassName or the
// global default resolved into spec.priority and spec.preemptionPolicy, refusals in upstream's words.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { ObjectStore } from '../../src/agent/object-store.js';
import { admitPodPriority, keepPodPriority } from '../../src/agent/priority-admission.js';
import { createSystemPriorityClasses } from '../../src/agent/system-priority-classes.js';
import { objectStrategies } from '../../src/kubeapi/strategies.js';

const pc = (name: string, value: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  ...extra,
});

async function store(): Promise<ObjectStore> {
  const s = new ObjectStore({ kinds: [...objectStrategies] });
  await createSystemPriorityClasses(s);
  return s;
}

const pod = (spec: Record<string, unknown> = {}): Pod =>
  ({ metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec } }) as Pod;

async function refusal(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; message: string };
  }
  assert.fail('expected a refusal');
}

test('the system classes are stored with their values, descriptions and PreemptLowerPriority', async () => {
  const s = await store();
  const items = s.list('PriorityClass').items as Array<ReturnType<typeof pc> & { preemptionPolicy: string; description: string }>;
  assert.deepEqual(
    items.map((c) => [c.metadata.name, c.value, c.preemptionPolicy]),
    [
      ['system-cluster-critical', 2000000000, 'PreemptLowerPriority'],
      ['system-node-critical', 2000001000, 'PreemptLowerPriority'],
    ],
  );
  const e = await refusal(s.delete('PriorityClass', '', 'system-node-critical'));
  assert.equal(e.code, 403);
  assert.equal(e.message, 'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted');
});

test('validation: a user class above 1e9, a system- name, a changed value; one global default', async () => {
  const s = await store();
  let e = await refusal(s.create('PriorityClass', pc('huge', 1_000_000_001)));
  assert.equal(e.code, 422);
  assert.equal(e.message, 'PriorityClass "huge" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000');
  e = await refusal(s.create('PriorityClass', pc('system-mine', 5)));
  assert.equal(
    e.message,
    'PriorityClass "system-mine" is invalid: metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: system-mine is not a known system priority class',
  );
  await s.create('PriorityClass', pc('low', 10, { globalDefault: true }));
  e = await refusal(s.create('PriorityClass', pc('other', 20, { globalDefault: true })));
  assert.equal(e.code, 403);
  assert.equal(e.message, 'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist');
  const low = s.get('PriorityClass', '', 'low')!;
  e = await refusal(s.update('PriorityClass', { ...low, value: 11 }));
  assert.equal(e.message, 'PriorityClass "low" is invalid: value: Forbidden: may not be changed in an update.');
  // The default itself may be updated.
  await s.update('PriorityClass', { ...low, description: 'the default' });
});

test('admission: the class named, the global default, none; refusals as upstream words them', async () => {
  const s = await store();
  const classes = s.storage('PriorityClass');
  await s.create('PriorityClass', pc('high', 1000, { preemptionPolicy: 'Never' }));

  let p = pod({ priorityClassName: 'high' });
  admitPodPriority(p, classes);
  assert.equal(p.spec!.priority, 1000);
  assert.equal(p.spec!.preemptionPolicy, 'Never');

  p = pod();
  admitPodPriority(p, classes);
  assert.deepEqual([p.spec!.priorityClassName, p.spec!.priority, p.spec!.preemptionPolicy], [undefined, 0, 'PreemptLowerPriority']);

  p = pod({ priorityClassName: 'system-node-critical' });
  admitPodPriority(p, classes);
  assert.equal(p.spec!.priority, 2000001000);

  await s.create('PriorityClass', pc('dflt', 7, { globalDefault: true }));
  p = pod();
  admitPodPriority(p, classes);
  assert.deepEqual([p.spec!.priorityClassName, p.spec!.priority, p.spec!.preemptionPolicy], ['dflt', 7, 'PreemptLowerPriority']);

  const refused = (spec: Record<string, unknown>) => {
    try {
      admitPodPriority(pod(spec), classes);
    } catch (err) {
      return [(err as { code: number }).code, (err as Error).message];
    }
    return undefined;
  };
  assert.deepEqual(refused({ priorityClassName: 'nope' }), [403, 'pods "p" is forbidden: no PriorityClass with name nope was found']);
  assert.deepEqual(refused({ priority: 5 }), [
    403,
    'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 7 from the given PriorityClass name',
  ]);
  assert.deepEqual(refused({ priorityClassName: 'high', preemptionPolicy: 'PreemptLowerPriority' }), [
    403,
    'pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
  ]);
  // The same values sent again (a pod read and written back) pass.
  assert.equal(refused({ priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' }), undefined);

  // An update keeps what create resolved.
  const old = pod({ priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
  const next = pod({ priorityClassName: 'high' });
  keepPodPriority(next, old);
  assert.deepEqual([next.spec!.priority, next.spec!.preemptionPolicy], [1000, 'Never']);
});
