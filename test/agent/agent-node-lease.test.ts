// The standalone agent's node Lease on an injected clock and a real object store: created in
// kube-node-lease owned by the Node, holder the node, 40 s; renewTime written again every 10 s (one
// store write each, nothing else); a failed write retried at 200 ms doubling; a Lease deleted by hand
// made again; the validation of a Lease as the API server's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ObjectStore } from '../../src/agent/object-store.js';
import { AgentNodeLease } from '../../src/agent/agent-node-lease.js';
import type { KubeObject, Storage } from '../../src/kubeapi/backend.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

type Lease = KubeObject & { spec: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string } };

function harness(storage?: (s: Storage) => Storage) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const store = new ObjectStore({ now: () => clock.now() });
  const real = store.storage('Lease')!;
  const lease = new AgentNodeLease({ nodeName: 'n1', storage: storage ? storage(real) : real, nodeUid: () => 'uid-1', clock, logger: silentLogger });
  const get = () => real.get('kube-node-lease', 'n1') as Lease | undefined;
  return { clock, store, lease, get, real };
}

test('created owned by the Node, then renewed every 10 s with one write each', async () => {
  const { clock, lease, get, real } = harness();
  let writes = 0;
  const w = real.watch!('', () => writes++);
  lease.start();
  await clock.advance(0);
  const first = get()!;
  assert.deepEqual(first.spec, { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2026-01-01T12:00:00.000000Z' });
  assert.deepEqual(first.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' }]);
  await clock.advance(9_999);
  assert.equal(get()!.spec.renewTime, '2026-01-01T12:00:00.000000Z');
  await clock.advance(1);
  assert.equal(get()!.spec.renewTime, '2026-01-01T12:00:10.000000Z');
  await clock.advance(50_000);
  assert.equal(get()!.spec.renewTime, '2026-01-01T12:01:00.000000Z');
  assert.equal(writes, 7);
  lease.stop();
  await clock.advance(60_000);
  assert.equal(get()!.spec.renewTime, '2026-01-01T12:01:00.000000Z');
  w.stop();
});

test('a Lease deleted by hand is made again at the next renewal', async () => {
  const { clock, lease, get, real } = harness();
  lease.start();
  await clock.advance(0);
  await real.delete!('kube-node-lease', 'n1', {});
  assert.equal(get(), undefined);
  await clock.advance(10_000);
  assert.equal(get()!.spec.renewTime, '2026-01-01T12:00:10.000000Z');
  lease.stop();
});

test('a failed renewal is retried at 200 ms, doubling up to the renew interval', async () => {
  let failures = 3;
  const attempts: number[] = [];
  const h = harness((s) => ({
    ...s,
    create: (o, opts) => {
      attempts.push(h.clock.now());
      return failures-- > 0 ? Promise.reject(new Error('store unavailable')) : s.create!(o, opts);
    },
  }));
  h.lease.start();
  await h.clock.advance(0);
  await h.clock.advance(1_400);
  const start = Date.UTC(2026, 0, 1, 12, 0, 0);
  assert.deepEqual(
    attempts.map((t) => t - start),
    [0, 200, 600, 1_400],
  );
  assert.equal(h.get()!.spec.renewTime, '2026-01-01T12:00:01.400000Z');
  h.lease.stop();
});

test('a Lease is validated as the API server validates it', async () => {
  const { real } = harness();
  await assert.rejects(
    real.create!(
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x', namespace: 'default' }, spec: { leaseDurationSeconds: 0 } } as KubeObject,
      {},
    ),
    /spec\.leaseDurationSeconds: Invalid value: 0: must be greater than 0/,
  );
});
