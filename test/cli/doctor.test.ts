// `podvisor doctor` through the real executable: with no containerd at the endpoint it says so with
// the fix and exits 1; against a containerd set up as the quick start says (local registry, pause
// image, restrict_oom_score_adj, CNI bin_dir) every check passes and it exits 0.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempDir } from '../fixtures/cli/cli-process.js';
import { containerdSuite, type ContainerdEnv } from '../containerd/harness.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));

test('doctor --runtime=containerd with nothing at the endpoint: FAIL with how to fix it, exit 1', async () => {
  const dir = await tempDir();
  try {
    const sock = join(dir.path, 'none.sock');
    const r = await runCli(['doctor', '--runtime=containerd', `--container-runtime-endpoint=unix://${sock}`, `--root-dir=${join(dir.path, 'root')}`]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, new RegExp(`^\\[FAIL\\] containerd socket ${sock} does not exist\\n {7}fix: start containerd`, 'm'));
    assert.match(r.stdout, /^\[ok\] {3}root dir .* is writable$/m);
    assert.match(r.stdout, /^1 problem found\n$/m);
  } finally {
    await dir.remove();
  }
});

test('doctor --runtime=containerd against a containerd set up for offline use: every check passes, exit 0', { skip }, async () => {
  const dir = await tempDir();
  try {
    const r = await runCli(['doctor', '--runtime=containerd', `--container-runtime-endpoint=${env.endpoint}`, `--root-dir=${join(dir.path, 'root')}`]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^\[ok\] {3}containerd answers on unix:\/\/.* \(containerd .*, CRI v1\)$/m);
    assert.match(r.stdout, /^\[ok\] {3}runc at \S+$/m);
    assert.match(r.stdout, /^\[ok\] {3}CNI plugins bridge, host-local, loopback, portmap in /m);
    assert.match(r.stdout, new RegExp(`^\\[ok\\] {3}sandbox \\(pause\\) image ${env.images.pause!.replace(/[.]/g, '\\.')} is (present|pulled)$`, 'm'));
    assert.doesNotMatch(r.stdout, /\[FAIL\]/);
    assert.match(r.stdout, /^no problems found\n$/m);
  } finally {
    await dir.remove();
  }
});
