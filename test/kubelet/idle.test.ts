// An idle node asks its runtime nothing: with the process runtime service pushing container events,
// many relist periods and periodic resyncs of every pod pass (on an injected clock) without a single
// runtime call, and a container's exit is still noticed at once, with the clock standing still.
// A real runtime service and CRI client, counted at the client.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod, PodStatus } from '../../src/api/types.js';
import { PodKubelet } from '../../src/kubelet/kubelet.js';
import { RELIST_PERIOD_MS } from '../../src/kubelet/pleg.js';
import type { RuntimeService } from '../../src/runtime/cri.js';
import { connectCriRuntime } from '../../src/runtime/cri/client.js';
import { startProcessRuntimeService } from '../../src/runtime/process/service.js';
import { PodStatusManager } from '../../src/status/status-manager.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { makePod, sh, waitFor } from './harness.js';

/** The client, with every runtime call (a method answering a promise) counted by method name. */
function counted(runtime: RuntimeService): { runtime: RuntimeService; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(runtime, {
    get(target, key) {
      const member: unknown = Reflect.get(target, key, target);
      if (typeof member !== 'function' || typeof key !== 'string') return member;
      return (...args: unknown[]) => {
        const result = (member as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) calls.set(key, (calls.get(key) ?? 0) + 1);
        return result;
      };
    },
  });
  return { runtime: proxy, calls };
}

/** The status manager, counting the statuses the pod workers' syncs publish. */
class CountingStatusManager extends PodStatusManager {
  published = 0;
  override setPodStatus(pod: Pod, status: PodStatus): void {
    this.published++;
    super.setPodStatus(pod, status);
  }
}

const RESYNC_MS = 5_000;

test('idle pods: relists and resyncs ask the runtime nothing; an exit is noticed without a tick', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-idle-'));
  const service = await startProcessRuntimeService({ rootDir: dir, endpoint: `unix://${join(dir, 'runtime.sock')}`, logger: silentLogger });
  const client = await connectCriRuntime({ endpoint: service.server.endpoint, logger: silentLogger });
  const { runtime, calls } = counted(client);
  const clock = new FakeClock();
  const statusManager = new CountingStatusManager({ clock, logger: silentLogger });
  const kubelet = new PodKubelet({
    logger: silentLogger,
    rootDir: dir,
    nodeName: 'test-node',
    lookup: { configMap: () => undefined, secret: () => undefined },
    runtime,
    clock,
    statusManager,
    resyncIntervalMs: RESYNC_MS,
  });
  try {
    const stop = join(dir, 'stop');
    const sleepers = ['a', 'b', 'c'].map((n) => makePod(n, [sh('main', 'exec sleep 300')]));
    const exiting = makePod('exiting', [sh('main', `while [ ! -e ${stop} ]; do sleep 0.05; done; exit 7`)], { restartPolicy: 'Never' });
    const pods = [...sleepers, exiting];
    for (const p of pods) kubelet.startPod(p);
    const running = (p: Pod) => kubelet.getPodStatus(p.metadata!.uid!)?.containerStatuses?.[0]?.state?.running !== undefined;
    await waitFor('every pod running', () => pods.every(running), 60_000);
    await waitFor('the container event stream connected', () => client.containerEventsConnection() !== undefined);

    // One resync period settles what the start left (the first resync of each pod fills the cache).
    for (let t = 0; t < 2 * RESYNC_MS; t += RELIST_PERIOD_MS) await clock.advance(RELIST_PERIOD_MS);
    await waitFor('the pods idle', () => pods.every(running));
    calls.clear();
    const publishedBefore = statusManager.published;

    const periods = 30;
    for (let i = 0; i < periods; i++) await clock.advance(RELIST_PERIOD_MS);
    // Each pod resynced at least twice (every 5-7.5 s of the 30 s), without asking the runtime.
    assert.ok(statusManager.published - publishedBefore >= 2 * pods.length, `resyncs ran: ${statusManager.published - publishedBefore} statuses published`);
    assert.deepEqual(Object.fromEntries(calls), {}, `no runtime call over ${periods} relist periods`);

    // An exit with the clock standing still: only the runtime's event can tell the kubelet.
    const now = clock.now();
    writeFileSync(stop, '');
    const exited = await waitFor('the exit seen', () => kubelet.getPodStatus(exiting.metadata!.uid!)?.containerStatuses?.[0]?.state?.terminated, 30_000);
    assert.equal(exited.exitCode, 7);
    assert.equal(clock.now(), now);
    assert.ok(existsSync(stop));
    assert.ok(pods.slice(0, 3).every(running), 'the other pods run on');
  } finally {
    await kubelet.close();
    await service.runtime.close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
