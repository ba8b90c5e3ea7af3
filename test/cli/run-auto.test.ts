// `podvisor run` with the default --wait=auto end to end: each pod waited for what it means, pods
// that cannot succeed failing at once with their container's message, progress lines on stderr,
// and a sandbox that cannot be created failing the pod instead of waiting out the timeout.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fixture, runCli, tempDir } from '../fixtures/cli/cli-process.js';

test('auto: a job to completion, a probed server to Ready, a plain container to running; exit 0', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', fixture('auto-mixed.yaml'), '--root-dir', join(tmp.path, 'root'), '--progress-every=500ms']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^job +0\/1 +Completed /m);
    assert.match(r.stdout, /^server +1\/1 +Running /m);
    assert.match(r.stdout, /^worker +1\/1 +Running /m);
    assert.match(r.stdout, /\nall 3 pods ok: 1 succeeded, 1 ready, 1 running\n$/);
    assert.match(r.stderr, /^waiting for pod\/server to be ready: container app running, not ready/m);
  } finally {
    await tmp.remove();
  }
});

test('auto: pods that cannot succeed fail at once, each with its container message; exit 1', async () => {
  const tmp = await tempDir();
  try {
    const started = Date.now();
    const r = await runCli(['run', '-f', fixture('auto-failures.yaml'), '--root-dir', join(tmp.path, 'root')]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    // Far below the 5m default timeout: nothing waits for a pod that cannot get there.
    assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
    assert.match(r.stdout, /3 of 3 pods failed:\n/);
    assert.match(
      r.stdout,
      /pod\/quitter: pod "quitter_default\([0-9a-f]+\)" failed\n  container app: exit code 3 \(Error\)\n    last 2 log lines:\n    \| working\n    \| oops\n/,
    );
    assert.match(
      r.stdout,
      /pod\/no-config: pod "no-config_default\([0-9a-f]+\)" cannot become running: container app: CreateContainerConfigError: configmap "nope" not found\n/,
    );
    assert.match(r.stdout, /  container app: waiting: CreateContainerConfigError: configmap "nope" not found\n/);
    assert.match(
      r.stdout,
      /pod\/typo: pod "typo_default\([0-9a-f]+\)" cannot become running: container app: \w+: exec: "slep": executable file not found in \$PATH\n/,
    );
  } finally {
    await tmp.remove();
  }
});

test('auto: a sandbox that cannot be created fails the pod after the same error twice', async () => {
  const tmp = await tempDir();
  try {
    // The root dir exists, but its sandboxes directory is a file: every sandbox creation fails alike.
    const root = join(tmp.path, 'root');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'sandboxes'), '');
    const r = await runCli(['run', '-f', fixture('two-running.yaml'), '--root-dir', root, '--progress-every=1s']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /pod\/web: pod "web_default\([0-9a-f]+\)" cannot start: Failed to create pod sandbox: (rpc error: code = Unknown desc = )?refusing path .*sandboxes is not a directory/,
    );
    assert.match(
      r.stderr,
      /waiting for pod\/web to be running: container app waiting: ContainerCreating \(last warning: FailedCreatePodSandBox: Failed to create pod sandbox: (rpc error: code = Unknown desc = )?refusing path/,
    );
    // As kubectl shows such a pod: Pending, its containers waiting in ContainerCreating.
    assert.match(r.stdout, /^web +0\/1 +ContainerCreating +0 /m);
  } finally {
    await tmp.remove();
  }
});
