// The runtime service's own end: once no agent follows its events and no pod sandbox is left, it
// stops by itself (after IDLE_EXIT_MS), also when its agent was killed with kill -9 and never said
// goodbye; while a sandbox remains it stays, holding its containers for the next agent.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, runCli, runtimeServicePids, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';
import { lockOwner } from '../../src/runtime/root-lock.js';
import { IDLE_EXIT_MS } from '../../src/runtime/process/service.js';

test('kill -9 of the agent: the runtime service stays while a pod sandbox remains, and exits once none is left and no agent came back', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'web.yaml');
  writeFileSync(file, manifestYaml(pod('web', [shell('main', 'sleep 300')], { terminationGracePeriodSeconds: 1 })));
  try {
    const up = await runCli(['up', '-d', '-f', file, '--root-dir', root]);
    assert.equal(up.code, 0, up.stderr);
    const [service] = await waitFor('the runtime service', async () => {
      const pids = await runtimeServicePids(tmp.path);
      return pids.length > 0 && pids;
    });
    const agent = lockOwner(root);
    assert.ok(agent, 'the agent holds the root dir');
    process.kill(agent.pid, 'SIGKILL');
    await waitFor('the agent to be gone', () => !isAlive(agent.pid));
    // The pod's sandbox remains: the service keeps its container for the next agent.
    await holdsFor('the runtime service, holding a sandbox, keeps running', () => isAlive(service!), IDLE_EXIT_MS + 2_000);

    // A new agent takes the pod back and deletes it; then it too is killed with kill -9.
    const again = await runCli(['up', '-d', '-f', file, '--root-dir', root]);
    assert.equal(again.code, 0, again.stderr);
    const down = await runCli(['down', '--all', '--root-dir', root, '--grace-period', '0']);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /pod "web" deleted/);
    const second = lockOwner(root);
    assert.ok(second, 'up -d started a second agent');
    assert.deepEqual(await runtimeServicePids(tmp.path), [service], 'the same service served the new agent');
    process.kill(second.pid, 'SIGKILL');
    await waitFor('the runtime service, with no agent and no sandbox, to exit by itself', () => !isAlive(service!), IDLE_EXIT_MS + 30_000);
  } finally {
    await runCli(['agent', 'stop', '--root-dir', root]);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
