// The taint manager's NoExecute eviction with an injected clock: an untolerated NoExecute taint
// deletes the pod at once; tolerationSeconds delays it (the shortest matching one); a toleration
// without seconds keeps the pod; removing the taint cancels a pending eviction; NoSchedule taints
// evict nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod, Taint } from '../../src/api/types.js';
import { minTolerationMs, TaintEvictionController } from '../../src/scheduler/taint-eviction.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { node, pod } from './helpers.js';

function harness(pods: Pod[], taints: Taint[]) {
  const clock = new FakeClock();
  const n = node({ taints });
  const evicted: string[] = [];
  const c = new TaintEvictionController({
    clock,
    logger: silentLogger,
    recorder: { event: () => {} },
    node: () => n,
    pods: () => pods.filter((p) => !evicted.includes(p.metadata!.name!)),
    evict: async (p) => void evicted.push(p.metadata!.name!),
  });
  return { clock, n, evicted, c };
}

const bound = (tolerations: NonNullable<Pod['spec']>['tolerations'] = []) => pod({ nodeName: 'vm', tolerations });

test('minTolerationMs: untolerated, forever, the shortest seconds', () => {
  const taints = [{ key: 'k', effect: 'NoExecute' }];
  assert.equal(minTolerationMs(taints, []), undefined);
  assert.equal(minTolerationMs(taints, [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }]), -1);
  assert.equal(
    minTolerationMs(taints, [
      { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
      { operator: 'Exists', tolerationSeconds: 10 },
    ]),
    10_000,
  );
});

test('NoExecute: untolerated at once, tolerationSeconds later, forever never, removal cancels', async () => {
  const untolerated = bound();
  const forAWhile = bound([{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]);
  const forever = bound([{ key: 'k', operator: 'Exists', effect: 'NoExecute' }]);
  const h = harness([untolerated, forAWhile, forever], [{ key: 'k', value: 'v', effect: 'NoExecute' }]);
  h.c.sync();
  await h.clock.advance(0);
  assert.deepEqual(h.evicted, [untolerated.metadata!.name]);
  assert.equal(h.c.pending(), 1);
  await h.clock.advance(4999);
  assert.deepEqual(h.evicted, [untolerated.metadata!.name]);
  await h.clock.advance(1);
  assert.deepEqual(h.evicted, [untolerated.metadata!.name, forAWhile.metadata!.name]);
  h.c.close();
});

test('removing the taint cancels a pending eviction; NoSchedule evicts nothing', async () => {
  const p = bound([{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]);
  const h = harness([p, bound()], [{ key: 'k', effect: 'NoExecute' }]);
  h.n.spec!.taints = [{ key: 'other', effect: 'NoSchedule' }];
  h.c.sync();
  await h.clock.advance(10_000);
  assert.deepEqual(h.evicted, []);
  h.n.spec!.taints = [{ key: 'k', effect: 'NoExecute' }];
  h.c.sync();
  await h.clock.advance(0);
  assert.equal(h.evicted.length, 1);
  assert.equal(h.c.pending(), 1);
  h.n.spec!.taints = [];
  h.c.sync();
  assert.equal(h.c.pending(), 0);
  await h.clock.advance(10_000);
  assert.equal(h.evicted.length, 1);
  h.c.close();
});
