// /healthz/syncloop follows the agent's housekeeping: healthy while it completes with the runtime
// answering, failing once it has not for twice the sync frequency (shortened here), and healthy again
// after housekeeping had the runtime service started again. A real process runtime service and the CRI
// client; the agent in process.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StandaloneAgent } from '../../src/agent/standalone-agent.js';
import { connectCriRuntime } from '../../src/runtime/cri/client.js';
import { startProcessRuntimeService, type ProcessRuntimeService } from '../../src/runtime/process/service.js';
import { listen } from '../../src/server/listen.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { call } from './helpers.js';
import { waitFor } from '../fixtures/wait.js';

test('/healthz/syncloop fails while housekeeping cannot reach the runtime, and recovers when it starts it again', async () => {
  const root = mkdtempSync(join(tmpdir(), 'podvisor-syncloop-'));
  const endpoint = `unix://${join(root, 'runtime.sock')}`;
  let service: ProcessRuntimeService | undefined = await startProcessRuntimeService({ rootDir: root, endpoint, logger: silentLogger });
  const client = await connectCriRuntime({ endpoint, logger: silentLogger });
  let restarts = 0;
  let allowRestart = false;
  // Housekeeping runs on its own timer; the syncloop check reads this clock, so time only moves when told.
  const clock = new FakeClock();
  const agent = new StandaloneAgent({
    rootDir: root,
    nodeName: 'node-a',
    clock,
    logger: silentLogger,
    version: 'test',
    nodeAllocatable: { cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 },
    runtime: client,
    syncFrequencyMs: 500,
    housekeepingMs: 100,
    restartRuntime: async () => {
      if (!allowRestart || service) return;
      restarts++;
      service = await startProcessRuntimeService({ rootDir: root, endpoint, logger: silentLogger });
    },
  });
  const l = await listen({ router: agent.router, socketPath: join(root, 'podvisor.sock') });
  try {
    agent.startHousekeeping();
    const health = async () => (await call(l.socketPath, 'GET', '/healthz/syncloop')).status;
    assert.equal(await health(), 200);

    await service.close();
    service = undefined;
    // One sync period after another: housekeeping cannot complete, and after two the check fails.
    await waitFor('syncloop failing', async () => {
      await clock.advance(500);
      return (await health()) === 500;
    });
    assert.match((await call(l.socketPath, 'GET', '/healthz/syncloop')).body, /syncloop failed/);

    allowRestart = true;
    await waitFor('syncloop healthy again', async () => (await health()) === 200, 30_000);
    assert.equal(restarts, 1);
  } finally {
    await l.close();
    await agent.stop();
    await service?.close();
    rmSync(root, { recursive: true, force: true });
  }
});
