// Rootless containerd under RootlessKit, started by podvisor itself: a normal user (made here with
// useradd, a subordinate id range in /etc/subuid and /etc/subgid, run with runuser) loads a local
// image (`image load`, no registry) and runs `up -d -f` of a Deployment whose container has no command
// with an httpGet readiness probe: podvisor chooses containerd, starts it in a user namespace under
// RootlessKit (the pods' network in RootlessKit's namespace), the probes reach the pods through
// RootlessKit's port driver and the pods reach Ready; its NodePort on the host's loopback reaches a pod
// (the service proxy dials through the port driver too); `down --all --agent` then leaves no rootlesskit, slirp4netns,
// containerd or shim process of the user behind.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { managedContainerdLayout } from '../../src/runtime/containerd/config.js';
import { onPath } from '../../src/runtime/containerd/host.js';
import { rootlessProblems, thisRootlessHost } from '../../src/runtime/containerd/rootless.js';
import { mainJs } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { skipReason } from './harness.js';
import { buildTestImages } from './images.js';

const run = promisify(execFile);
const user = `pvrk${process.pid % 100000}`;

async function reason(): Promise<string | false> {
  if (process.getuid?.() !== 0) return 'needs root to create a user';
  if (!onPath('useradd') || !onPath('runuser')) return 'useradd and runuser are needed';
  const base = await skipReason();
  if (base) return base;
  // What RootlessKit needs besides the user's own range (given below): /dev/net/tun open to all, as Debian ships it.
  const missing = rootlessProblems({ ...thisRootlessHost(onPath, 0), name: 'root' }).filter((p) => !/subordinate ids|\/dev\/net\/tun/.test(p.what));
  if (missing.length) return missing.map((p) => `${p.what} (${p.fix})`).join('; ');
  if ((statSync('/dev/net/tun').mode & 0o006) !== 0o006) return '/dev/net/tun is not open to all users (chmod 0666 /dev/net/tun)';
  return false;
}
const skip = await reason();
let uid = 0;
let dir: string;
let layout: string;

before(async () => {
  if (skip) return;
  layout = await buildTestImages();
  await run('useradd', ['--no-create-home', '--shell', '/bin/sh', user]);
  uid = Number((await run('id', ['-u', user])).stdout.trim());
  const first = 400000 + (process.pid % 1000) * 65536;
  await run('usermod', ['--add-subuids', `${first}-${first + 65535}`, '--add-subgids', `${first}-${first + 65535}`, user]);
  dir = mkdtempSync(join(tmpdir(), 'pvrk-'));
  chownSync(dir, uid, uid);
});
after(async () => {
  if (skip) return;
  if (dir) await asUser(['agent', 'stop', `--root-dir=${join(dir, 'root')}`]).catch(() => undefined);
  for (const pid of userPids()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  await run('userdel', [user]).catch(() => undefined);
  for (const f of ['/etc/subuid', '/etc/subgid']) await run('sed', ['-i', `/^${user}:/d`, f]).catch(() => undefined);
  // The user's files include those of the namespace's ids (the containers' rootfs): root removes them.
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** podvisor run as the test's user (its own environment, HOME in the test's directory). */
async function asUser(args: string[], timeout = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('runuser', ['-u', user, '--', 'env', `HOME=${dir}`, `PATH=${process.env.PATH}`, process.execPath, mainJs, ...args], {
      cwd: dir,
      timeout,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** The processes of the test's user (real uid), with their command names. */
function userProcesses(): Array<{ pid: number; comm: string }> {
  const out: Array<{ pid: number; comm: string }> = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      const m = /^Uid:\s+(\d+)/m.exec(status);
      if (m && Number(m[1]) === uid && !/^State:\s+Z/m.test(status)) out.push({ pid: Number(p), comm: readFileSync(`/proc/${p}/comm`, 'utf8').trim() });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const userPids = () => (uid ? userProcesses().map((p) => p.pid) : []);

test(
  'a normal user: up -f of a Deployment without command, with a readiness probe, runs on containerd under RootlessKit and reaches Ready; down --all --agent leaves nothing running',
  { skip },
  async () => {
    const root = join(dir, 'root');
    const archive = join(dir, 'web.tar');
    await run('skopeo', ['copy', '--quiet', `oci:${layout}:web`, `docker-archive:${archive}:localhost/web:dev`]);
    chownSync(archive, uid, uid);
    const loaded = await asUser(['image', 'load', '-i', archive, `--root-dir=${root}`]);
    assert.equal(loaded.code, 0, `${loaded.stdout}\n${loaded.stderr}`);
    assert.deepEqual(userProcesses(), [], 'the containerd image load started is stopped after it');

    const nodePort = 30000 + (process.pid % 2700);
    const manifest = join(dir, 'web.yaml');
    writeFileSync(
      manifest,
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: httpd
        image: localhost/web:dev
        imagePullPolicy: Never
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080, nodePort: ${nodePort}}]
`,
    );
    chownSync(manifest, uid, uid);
    const up = await asUser(['up', '-d', '-f', manifest, '--wait=ready', '--timeout=90s', `--root-dir=${root}`]);
    const log = () => {
      try {
        return readFileSync(join(root, 'agent.log'), 'utf8').slice(-3000) + readFileSync(managedContainerdLayout(root).log, 'utf8').slice(-2000);
      } catch {
        return '';
      }
    };
    assert.equal(up.code, 0, `${up.stdout}\n${up.stderr}\n${log()}`);
    assert.match(up.stderr, /runtime: containerd/);
    const config = readFileSync(managedContainerdLayout(root).config, 'utf8');
    assert.match(config, /snapshotter = "(overlayfs|fuse-overlayfs|native)"/);
    assert.match(config, /restrict_oom_score_adj = true/);
    const comms = userProcesses().map((p) => p.comm);
    assert.ok(comms.includes('rootlesskit') && comms.includes('containerd'), comms.join(' '));

    const pods = await asUser(['get', 'pods', '-o', 'json', `--root-dir=${root}`]);
    assert.equal(pods.code, 0, pods.stderr);
    const items = (JSON.parse(pods.stdout) as { items: Array<{ status: { conditions?: Array<{ type: string; status: string }> } }> }).items;
    assert.equal(items.length, 2);
    for (const p of items)
      assert.ok(
        p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        JSON.stringify(p.status),
      );

    // The NodePort on the host's loopback reaches a pod through RootlessKit's port driver (busybox httpd answers).
    const status = await waitFor('the NodePort answers', () =>
      fetch(`http://127.0.0.1:${nodePort}/`).then(
        (r) => r.status,
        () => undefined,
      ),
    );
    assert.ok(status >= 200 && status < 500, String(status));

    const stop = await asUser(['down', '--all', '--agent', '--grace-period=0', `--root-dir=${root}`]);
    assert.equal(stop.code, 0, `${stop.stdout}\n${stop.stderr}`);
    await waitFor('the user has no process left', () => (userProcesses().length === 0 ? true : undefined), 30_000).catch(() => undefined);
    assert.deepEqual(userProcesses(), [], 'no rootlesskit, slirp4netns, containerd or shim is left');
  },
);
