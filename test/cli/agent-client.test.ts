// How commands reach the agent of a root dir, through the built CLI and real agents: commands started
// together on one root dir with no agent share the one agent that wins its lock; a command that finds
// the lock held by an agent still starting waits for its socket and goes through it; a burst of
// clients at an agent that starts listening under them all get their answer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runtimeServicePids, startCli, stopRuntimeServices, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { waitFor } from '../fixtures/wait.js';
import { lockOwner } from '../../src/runtime/root-lock.js';

const waitingLine = /^waiting for the podvisor agent of root dir .* \(pid \d+\) to accept connections; see .*agent\.log$/m;

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

/**
 * An agent held in its start with the root dir's lock taken: a pod left running by an earlier agent,
 * its runtime service stopped (SIGSTOP), and `podvisor agent` started again, which takes the lock and
 * then waits for that runtime to answer. release() lets the runtime go on, and with it the agent.
 */
async function agentHeldInStart(root: string, tmpPath: string, file: string): Promise<{ agent: CliProcess; release(): void }> {
  const up = await runCli(['up', '-d', '-f', file, '--root-dir', root]);
  assert.equal(up.code, 0, up.stderr);
  const stop = await runCli(['agent', 'stop', '--root-dir', root]);
  assert.equal(stop.code, 0, stop.stderr);
  const [runtimePid] = await runtimeServicePids(tmpPath);
  assert.ok(runtimePid, 'the runtime service keeps running with the pod');
  signal(runtimePid, 'SIGSTOP');
  const agent = startCli(['agent', '--root-dir', root]);
  await waitFor('the restarted agent holds the root dir', () => lockOwner(root)?.command === 'agent' && lockOwner(root)?.pid === agent.child.pid);
  return { agent, release: () => signal(runtimePid, 'SIGCONT') };
}

test('up -d started together on one root dir with no agent: every one succeeds, through the one agent that starts', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'web.yaml');
  writeFileSync(file, manifestYaml(pod('web', [shell('main', 'exec sleep 300')], { terminationGracePeriodSeconds: 1 })));
  try {
    // Three at once, so that at least two start an agent before either holds the lock.
    const ups = await Promise.all([0, 1, 2].map(() => runCli(['up', '-d', '-f', file, '--root-dir', root])));
    for (const r of ups) assert.equal(r.code, 0, r.stderr);
    assert.ok(
      ups.some((r) => /^started the podvisor agent for /m.test(r.stderr)),
      'one of them says it started the agent',
    );
    const owner = lockOwner(root);
    assert.equal(owner?.command, 'agent');
    const got = await runCli(['get', 'pods', '-o', 'name', '--root-dir', root]);
    assert.equal(got.stdout, 'pod/web\n');
  } finally {
    await runCli(['down', '--all', '--agent', '--root-dir', root, '--grace-period', '0']);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});

test('get, apply and wait while the agent of the root dir starts: each waits for its socket and goes through it', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'web.yaml');
  writeFileSync(file, manifestYaml(pod('web', [shell('main', 'exec sleep 300')], { terminationGracePeriodSeconds: 1 })));
  const config = join(tmp.path, 'config.yaml');
  writeFileSync(config, manifestYaml({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } }));
  let held: Awaited<ReturnType<typeof agentHeldInStart>> | undefined;
  try {
    held = await agentHeldInStart(root, tmp.path, file);
    const clients = {
      get: startCli(['get', 'pods', '-o', 'name', '--root-dir', root]),
      apply: startCli(['apply', '-f', config, '--root-dir', root]),
      wait: startCli(['wait', 'web', '--for=running', '--timeout=60s', '--root-dir', root]),
    };
    for (const c of Object.values(clients)) await c.waitFor('stderr', waitingLine, 60_000);
    held.release();
    const [get, apply, wait] = await Promise.all(Object.values(clients).map(async (c) => ({ ...(await c.exited), out: c.stdout(), err: c.stderr() })));
    assert.equal(get!.code, 0, get!.err);
    assert.equal(get!.out, 'pod/web\n');
    assert.equal(apply!.code, 0, apply!.err);
    assert.match(apply!.out, /^configmap\/settings created$/m);
    assert.doesNotMatch(apply!.err, /started the podvisor agent/, 'apply used the agent that was starting');
    assert.equal(wait!.code, 0, wait!.err);
    assert.equal(lockOwner(root)?.pid, held.agent.child.pid, 'the one agent serves the root dir');
  } finally {
    held?.release();
    await runCli(['down', '--all', '--agent', '--root-dir', root, '--grace-period', '0']);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});

test('200 concurrent get pods at an agent that starts listening under them: every one answers', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'web.yaml');
  writeFileSync(file, manifestYaml(pod('web', [shell('main', 'exec sleep 300')], { terminationGracePeriodSeconds: 1 })));
  let held: Awaited<ReturnType<typeof agentHeldInStart>> | undefined;
  try {
    held = await agentHeldInStart(root, tmp.path, file);
    const clients = Array.from({ length: 200 }, () => startCli(['get', 'pods', '-o', 'name', '--root-dir', root]));
    // Every one has tried and found the agent not listening yet (or, before that, ended with an error).
    await Promise.all(clients.map((c) => Promise.race([c.waitFor('stderr', waitingLine, 120_000), c.exited])));
    held.release();
    const results = await Promise.all(clients.map(async (c) => ({ ...(await c.exited), out: c.stdout(), err: c.stderr() })));
    const failed = results.filter((r) => r.code !== 0 || r.out !== 'pod/web\n');
    assert.equal(failed.length, 0, `${failed.length} of 200 failed, e.g.: ${failed[0]?.err}`);
  } finally {
    held?.release();
    await runCli(['down', '--all', '--agent', '--root-dir', root, '--grace-period', '0']);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
