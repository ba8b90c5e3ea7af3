// The agent's life on the command line: `up -d --port 0` starts an agent kubectl can reach at once,
// `down --all` says the agent keeps running and how to stop it, `agent stop` stops it (root dir free
// for `run` again), `run` beside a running agent goes through it, and `down --all --agent` tears
// everything down, the runtime service included.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isAlive, runCli, runtimeServicePids, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { waitFor } from '../fixtures/wait.js';
import { lockOwner } from '../../src/runtime/root-lock.js';

const exec = promisify(execFile);

test('up -d --port serves kubectl; down --all says the agent keeps running; agent stop and down --all --agent end it', async (t) => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'web.yaml');
  writeFileSync(file, manifestYaml(pod('web', [shell('main', 'sleep 300')], { terminationGracePeriodSeconds: 1 })));
  try {
    const up = await runCli(['up', '-d', '-f', file, '--root-dir', root, '--port', '0']);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stderr, new RegExp(`kubectl: export KUBECONFIG=${root}/kubeconfig`));
    const kubectl = process.env.KUBECTL ?? 'kubectl';
    const got = await exec(kubectl, ['--kubeconfig', join(root, 'kubeconfig'), 'get', 'pods', '-o', 'name']).catch((err: Error) => {
      t.diagnostic(`kubectl unavailable: ${err.message}`);
      return undefined;
    });
    if (got) assert.equal(got.stdout, 'pod/web\n');

    const down = await runCli(['down', '--all', '--root-dir', root, '--grace-period', '0']);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /pod "web" deleted/);
    assert.match(down.stderr, /the podvisor agent for .* keeps running .*podvisor agent stop --root-dir .*podvisor down --all --agent/);

    const stop = await runCli(['agent', 'stop', '--root-dir', root]);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stderr, /stopped the podvisor agent for /);
    assert.equal(lockOwner(root), undefined, 'the root dir is free');
    await waitFor('the runtime service, left with no pod, exits with the agent', async () => {
      const pids = await runtimeServicePids(tmp.path);
      return pids.every((p) => !isAlive(p));
    });
    const again = await runCli(['agent', 'stop', '--root-dir', root]);
    assert.equal(again.code, 0);
    assert.match(again.stderr, /no podvisor agent runs for root dir/);

    // The one teardown: pods and agent together.
    assert.equal((await runCli(['up', '-d', '-f', file, '--root-dir', root])).code, 0);
    // run beside the agent: its pod goes through that agent (agent flags said to apply only to one run starts).
    const once = join(tmp.path, 'once.yaml');
    writeFileSync(once, manifestYaml(pod('once', [shell('main', 'echo once ran')], { restartPolicy: 'Never' })));
    const beside = await runCli(['run', '-f', once, '--logs', '--runtime=process', '--root-dir', root]);
    assert.equal(beside.code, 0, beside.stderr);
    assert.match(beside.stderr, /^warning: the agent for .* already runs: --runtime=process applies only to an agent run starts/m);
    assert.match(beside.stderr, /^pod\/once created$/m);
    assert.match(beside.stdout, /^once\/main \| once ran$/m);
    const all = await runCli(['down', '--all', '--agent', '--root-dir', root, '--grace-period', '0']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /pod "web" deleted/);
    assert.match(all.stderr, /stopped the podvisor agent for /);
    assert.equal(lockOwner(root), undefined);
    const bad = await runCli(['down', '-f', file, '--agent', '--root-dir', root]);
    assert.equal(bad.code, 2);
  } finally {
    await runCli(['agent', 'stop', '--root-dir', root]);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
