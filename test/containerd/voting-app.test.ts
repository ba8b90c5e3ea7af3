// A realistic application from public manifests, as shipped: Docker's example voting app
// (test/fixtures/voting-app, `k8s-specifications/` unedited) run with `up -d -f DIR` and nothing
// else but a registry mirror: no --runtime (its containers have no command, so containerd is chosen)
// and no sandbox image (podvisor's own). Each image is a stand-in built here from busybox, listening
// on the manifest's port, served under its original docker.io name through a hosts.toml mirror.
// The manifests fix their NodePorts (31000, 31001); the test does not rely on them (another agent on
// the host may hold them): one another process holds is told by `up` as a Warning naming it.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { mountsUnder } from '../../src/runtime/containerd/managed.js';
import { heldByOthers } from '../../src/util/host-sockets.js';
import { runCli } from '../fixtures/cli/cli-process.js';
import { skipReason, startTestRegistry, type TestRegistry } from './harness.js';

const run = promisify(execFile);
const skip = await skipReason();
const manifests = fileURLToPath(new URL('../../../test/fixtures/voting-app', import.meta.url));
let reg: TestRegistry;
let dir: string;

/** docker.io name → the stand-in's command (a server on the manifest's port, or a loop). */
const STAND_INS: Record<string, string[]> = {
  'dockersamples/examplevotingapp_vote:latest': ['httpd', '-f', '-p', '80', '-h', '/www'],
  'dockersamples/examplevotingapp_result:latest': ['httpd', '-f', '-p', '80', '-h', '/www'],
  'dockersamples/examplevotingapp_worker:latest': ['sleep', 'inf'],
  'library/postgres:15-alpine': ['httpd', '-f', '-p', '5432', '-h', '/www'],
  'library/redis:alpine': ['httpd', '-f', '-p', '6379', '-h', '/www'],
};

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'podvisor-voting-'));
  reg = await startTestRegistry(dir);
  const layout = join(dir, 'stand-ins');
  await run('skopeo', ['copy', '--quiet', `oci:${reg.layout}:busybox`, `oci:${layout}:base`]);
  for (const [name, cmd] of Object.entries(STAND_INS)) {
    const tag = name.replace(/[/:]/g, '-');
    await run('umoci', ['config', '--image', `${layout}:base`, '--tag', tag, ...cmd.flatMap((c) => ['--config.cmd', c])]);
    await run('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', `oci:${layout}:${tag}`, `docker://${reg.registry}/${name}`]);
  }
});
after(async () => {
  await reg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("Docker's example voting app, as shipped, reaches Available on the containerd podvisor starts", { skip }, async () => {
  const root = join(dir, 'root');
  const hosts = join(dir, 'registry-config');
  mkdirSync(join(hosts, 'docker.io'), { recursive: true });
  writeFileSync(
    join(hosts, 'docker.io', 'hosts.toml'),
    `server = "https://registry-1.docker.io"\n\n[host."http://${reg.registry}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  const fixedNodePorts = { vote: 31000, result: 31001 };
  const held = Object.entries(fixedNodePorts).filter(([, port]) => heldByOthers('TCP', port, ['127.0.0.1']).length > 0);
  try {
    const up = await runCli(['up', '-d', '-f', manifests, '--timeout=150s', `--registry-config=${hosts}`, `--root-dir=${root}`], 200_000);
    assert.equal(up.code, 0, `${up.stdout}\n${up.stderr}`);
    assert.match(up.stderr, /^runtime: containerd \(5 containers have no command /m);
    for (const d of ['db', 'redis', 'result', 'vote', 'worker']) assert.match(up.stdout, new RegExp(`^deployment\\.apps/${d} created$`, 'm'));
    for (const [svc, port] of held)
      assert.match(
        up.stderr,
        new RegExp(`^Warning: service/${svc}: spec\\.ports\\[0\\]\\.nodePort: port ${port}/TCP is held by another process on this host`, 'm'),
      );
    const get = await runCli(['get', 'pods', `--root-dir=${root}`]);
    assert.equal(
      get.stdout
        .trim()
        .split('\n')
        .slice(1)
        .filter((l) => /\s1\/1\s+Running\s/.test(l)).length,
      5,
      get.stdout,
    );
  } finally {
    const down = await runCli(['down', '--all', '--agent', '--grace-period=0', `--root-dir=${root}`]);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(mountsUnder(root), []);
  }
});
