// `up -f` as a normal user (made here with useradd, run with runuser) who has no subordinate id range
// in /etc/subuid and /etc/subgid, of a Deployment whose container has no command: containerd cannot
// run under RootlessKit for this user, so podvisor chooses the process runtime, says in its one line
// why — each missing part with its fix (the range; /dev/net/tun where the host keeps it root's alone) —
// and the manifests are refused before anything starts, naming the container and the fix (exit 2).
// (A user with a range runs containerd under RootlessKit: rootless-up.test.ts.)

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { mainJs } from '../fixtures/cli/cli-process.js';
import { onPath } from '../../src/runtime/containerd/host.js';

const run = promisify(execFile);
const skip = process.getuid?.() !== 0 ? 'needs root to create a user' : !onPath('useradd') || !onPath('runuser') ? 'useradd and runuser are needed' : false;
const user = `pvrl${process.pid % 100000}`;
let uid = 0;
let dir: string;

before(async () => {
  if (skip) return;
  await run('useradd', ['--no-create-home', '--shell', '/bin/sh', user]);
  uid = Number((await run('id', ['-u', user])).stdout.trim());
  // useradd may give a new user a range of its own (login.defs SUB_UID_COUNT): none here.
  for (const f of ['/etc/subuid', '/etc/subgid']) await run('sed', ['-i', `/^${user}:/d`, f]);
  dir = mkdtempSync(join(tmpdir(), 'podvisor-rootless-'));
  chownSync(dir, uid, uid);
});
after(async () => {
  if (skip) return;
  await run('userdel', [user]).catch(() => undefined);
  for (const f of ['/etc/subuid', '/etc/subgid']) await run('sed', ['-i', `/^${user}:/d`, f]).catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** podvisor run as the test's user (its own environment, HOME in the test's directory). */
async function asUser(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('runuser', ['-u', user, '--', 'env', `HOME=${dir}`, `PATH=${process.env.PATH}`, process.execPath, mainJs, ...args], {
      cwd: dir,
      timeout: 60_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

test(
  'a normal user without a subuid range: up -f of a Deployment without command is refused up front, saying why containerd cannot run and each fix',
  { skip },
  async () => {
    const manifest = join(dir, 'web.yaml');
    writeFileSync(
      manifest,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: httpd, image: nginx}]\n',
    );
    chownSync(manifest, uid, uid);
    const r = await asUser(['up', '-f', manifest, `--root-dir=${join(dir, 'root')}`, '--for=5s']);
    assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
    const line = r.stderr.split('\n').find((l) => l.startsWith('runtime: process ('));
    assert.ok(line, r.stderr);
    assert.match(line, /1 container has no command \(deployment\.apps\/web: container httpd\), and containerd cannot run here: /);
    assert.match(
      line,
      new RegExp(`/etc/subuid gives ${user} 0 subordinate ids \\(65536 needed\\) \\(usermod --add-subuids 100000-165535 --add-subgids 100000-165535 ${user}`),
    );
    assert.match(line, new RegExp(`/etc/subgid gives ${user} 0 subordinate ids`));
    let tunOpen = true;
    try {
      accessSync('/dev/net/tun', constants.W_OK);
      // root can; whether the user can is what the line says
      tunOpen = await run('runuser', ['-u', user, '--', 'sh', '-c', 'test -r /dev/net/tun -a -w /dev/net/tun']).then(
        () => true,
        () => false,
      );
    } catch {
      tunOpen = false;
    }
    if (!tunOpen)
      assert.match(
        line,
        /\/dev\/net\/tun cannot be opened by pvrl\d+: slirp4netns cannot make the pods' tap device \(chmod 0666 \/dev\/net\/tun \(as root\)\)/,
      );
    assert.match(r.stderr, /The Deployment "web" is invalid: spec\.template\.spec\.containers\[0\]\.command: Required value: container "httpd" has no command/);
  },
);
