// `podvisor image load` without a registry: a `docker save` tarball (from a file) and an OCI archive
// (from standard input) go into the containerd podvisor runs for the root dir; `image ls` lists them;
// a pod with imagePullPolicy Never runs from the loaded image, its sandbox from a loaded pause image
// (nothing is pulled); `image rm` removes one. The containerd started for each command stops after it.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { managedContainerdLayout } from '../../src/runtime/containerd/config.js';
import { managedContainerdPid, mountsUnder } from '../../src/runtime/containerd/managed.js';
import { mainJs, runCli, type CliResult } from '../fixtures/cli/cli-process.js';
import { skipReason } from './harness.js';
import { buildTestImages } from './images.js';

const run = promisify(execFile);
const skip = await skipReason();
let dir: string;
let layout: string;

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'podvisor-imgload-'));
  layout = await buildTestImages();
});
after(async () => {
  if (!dir) return;
  await runCli(['down', '--all', '--agent', `--root-dir=${join(dir, 'root')}`]).catch(() => undefined);
  for (const m of mountsUnder(dir)) await run('umount', ['-l', m]).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI with a file on its standard input. */
function runWithStdin(args: string[], file: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [mainJs, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    createReadStream(file).pipe(child.stdin);
  });
}

test('image load of a docker save tarball and an OCI archive; a pod with imagePullPolicy Never runs from them; image rm', { skip }, async () => {
  const root = join(dir, 'root');
  const rootFlag = `--root-dir=${root}`;
  const docker = join(dir, 'app.tar');
  const pause = join(dir, 'pause.tar');
  const oci = join(dir, 'tools.tar');
  await run('skopeo', ['copy', '--quiet', `oci:${layout}:web`, `docker-archive:${docker}:app:dev`]);
  await run('skopeo', ['copy', '--quiet', `oci:${layout}:pause`, `docker-archive:${pause}:pause:local`]);
  await run('skopeo', ['copy', '--quiet', `oci:${layout}:busybox`, `oci-archive:${oci}:localhost/tools:oci`]);

  const loaded = await runCli(['image', 'load', '-i', docker, rootFlag]);
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.equal(loaded.stdout, 'Loaded image: docker.io/library/app:dev\n');
  assert.equal(managedContainerdPid(managedContainerdLayout(root)), undefined, 'the containerd started for the load stopped again');
  const p = await runCli(['image', 'load', '-i', pause, rootFlag]);
  assert.equal(p.code, 0, p.stderr);
  const fromStdin = await runWithStdin(['image', 'load', rootFlag], oci);
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.equal(fromStdin.stdout, 'Loaded image: localhost/tools:oci\n');

  const ls = await runCli(['image', 'ls', rootFlag]);
  assert.equal(ls.code, 0, ls.stderr);
  const lines = ls.stdout.trim().split('\n');
  assert.match(lines[0]!, /^IMAGE\s+TAG\s+IMAGE ID\s+SIZE$/);
  for (const [repo, tag] of [
    ['docker.io/library/app', 'dev'],
    ['docker.io/library/pause', 'local'],
    ['localhost/tools', 'oci'],
  ] as const) {
    assert.ok(
      lines.some((l) => new RegExp(`^${repo.replace(/[.]/g, '\\.')}\\s+${tag}\\s+[0-9a-f]{13}\\s+[0-9.]+[kM]?B$`).test(l)),
      ls.stdout,
    );
  }

  const manifest = join(dir, 'pod.yaml');
  writeFileSync(
    manifest,
    `apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: app:dev
    imagePullPolicy: Never
    readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
  - name: tools
    image: localhost/tools:oci
    imagePullPolicy: IfNotPresent
    command: [sleep, '3600']
`,
  );
  const ran = await runCli(['run', '-f', manifest, '--wait=ready', '--runtime=containerd', '--pod-infra-container-image=pause:local', rootFlag]);
  assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}`);
  assert.match(ran.stdout, /^app\s+2\/2\s+Running\s+0/m);
  assert.equal(managedContainerdPid(managedContainerdLayout(root)), undefined, 'run stops the containerd it started');

  const rm = await runCli(['image', 'rm', 'app:dev', rootFlag]);
  assert.equal(rm.code, 0, rm.stderr);
  assert.match(rm.stdout, /^Deleted: docker\.io\/library\/app:dev/);
  const after = await runCli(['image', 'ls', rootFlag]);
  assert.doesNotMatch(after.stdout, /library\/app\s/);
  const missing = await runCli(['image', 'rm', 'app:dev', rootFlag]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: no such image: app:dev$/m);
  assert.deepEqual(mountsUnder(root), []);
});
