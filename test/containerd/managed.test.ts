// The containerd podvisor runs itself (--runtime=containerd without --container-runtime-endpoint):
// `up -d` of a Deployment whose container has no command starts it from the host's binaries with the
// config written under the root dir and reaches Ready; the agent killed with SIGKILL and started again
// finds the same containerd and the same containers; `down --all --agent` then leaves no containerd,
// mount, bridge or network namespace behind.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { bridgeName, cidrRange, defaultPodCIDR } from '../../src/runtime/cni-config.js';
import { managedContainerdLayout } from '../../src/runtime/containerd/config.js';
import { mountsUnder, onPath } from '../../src/runtime/containerd/managed.js';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { mainJs, runCli, startCli } from '../fixtures/cli/cli-process.js';
import { removeAllSandboxes } from './cleanup.js';
import { waitFor } from '../fixtures/wait.js';
import { skipReason, startTestRegistry, type TestRegistry } from './harness.js';

const run = promisify(execFile);
const skip = await skipReason();
let reg: TestRegistry;
let dir: string;

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'podvisor-managed-'));
  reg = await startTestRegistry(dir);
});
after(async () => {
  await reg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function deployment(image: string): string {
  return `apiVersion: apps/v1
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
        image: ${image}
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
`;
}

interface AgentStatusJSON {
  pid: number;
  runtimeService?: { endpoint: string; pid?: number | null; config?: string };
}

/** containerd processes started for the root dir. */
function ctrdPids(root: string): number[] {
  const config = managedContainerdLayout(root).config;
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8') === `${onPath('containerd')}\0--config\0${config}\0`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Whether pid is a live process (a zombie left to a slow reaper counts as gone). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

async function agentStatus(root: string): Promise<AgentStatusJSON> {
  const st = await runCli(['agent', 'status', '-o', 'json', `--root-dir=${root}`]);
  assert.equal(st.code, 0, st.stderr);
  return JSON.parse(st.stdout) as AgentStatusJSON;
}

async function runningContainers(endpoint: string): Promise<string[]> {
  const client = new CriRuntimeClient({ endpoint, logger: silentLogger });
  try {
    return (await client.listContainers())
      .filter((c) => c.state === 'CONTAINER_RUNNING')
      .map((c) => c.id)
      .sort();
  } finally {
    await client.close();
  }
}

/** Network namespaces under /run/netns holding an address of the range. */
async function namespacesIn(cidr: string): Promise<string[]> {
  const { first, last } = cidrRange(cidr);
  const out: string[] = [];
  const names = existsSync('/run/netns') ? readdirSync('/run/netns') : [];
  for (const name of names) {
    const addrs = await run('ip', ['-n', name, '-o', '-4', 'addr']).then(
      (r) => r.stdout,
      () => '',
    );
    for (const m of addrs.matchAll(/inet (\d+)\.(\d+)\.(\d+)\.(\d+)\//g)) {
      const ip = ((Number(m[1]) * 256 + Number(m[2])) * 256 + Number(m[3])) * 256 + Number(m[4]);
      if (ip >= first && ip <= last) out.push(name);
    }
  }
  return out;
}

test(
  'up -d of a Deployment without command runs on the containerd podvisor starts; it outlives a killed agent and goes with down --all --agent',
  { skip },
  async () => {
    const root = join(dir, 'root');
    const manifest = join(dir, 'web.yaml');
    writeFileSync(manifest, deployment(reg.images.web!));
    const common = ['--runtime=containerd', `--pod-infra-container-image=${reg.images.pause}`, `--root-dir=${root}`];
    const layout = managedContainerdLayout(root);
    const endpoint = `unix://${layout.socket}`;
    try {
      const up = await runCli(['up', '-d', '-f', manifest, '--wait=ready', '--timeout=90s', ...common]);
      assert.equal(up.code, 0, `${up.stdout}\n${up.stderr}\n${readFileSync(join(root, 'agent.log'), 'utf8').slice(-3000)}`);

      // The config podvisor wrote: the CRI plugin's sandbox image, its own root/state/socket, the CNI network.
      const config = readFileSync(layout.config, 'utf8');
      assert.match(config, new RegExp(`sandbox_image = "${reg.images.pause}"`));
      assert.match(config, new RegExp(`address = "${layout.socket}"`));
      assert.ok(existsSync(join(layout.cniConfDir, '10-podvisor.conflist')));

      const first = await agentStatus(root);
      let ctrdPid = first.runtimeService?.pid;
      assert.ok(typeof ctrdPid === 'number' && running(ctrdPid), JSON.stringify(first));
      assert.match(readFileSync(`/proc/${ctrdPid}/cmdline`, 'utf8'), /containerd\0--config\0.*config\.toml/);
      const containers = await runningContainers(endpoint);
      assert.equal(containers.length, 2);

      // The agent killed: containerd and the containers stay; the next agent finds them.
      process.kill(first.pid, 'SIGKILL');
      await new Promise<void>((r) => {
        const check = () => (running(first.pid) ? setImmediate(check) : r());
        check();
      });
      assert.ok(running(ctrdPid));
      assert.deepEqual(await runningContainers(endpoint), containers);
      const agent = startCli(['agent', ...common]);
      await agent.waitFor('stderr', /podvisor agent started/, 60_000);
      const second = await agentStatus(root);
      assert.notEqual(second.pid, first.pid);
      assert.equal(second.runtimeService?.pid, ctrdPid, 'the restarted agent uses the same containerd');
      assert.deepEqual(await runningContainers(endpoint), containers, 'no container was restarted');

      // containerd killed: the agent starts it again, and the containers (kept by their shims) are still the same.
      process.kill(ctrdPid, 'SIGKILL');
      const restarted = await waitFor('containerd started again by the agent', async () => {
        const pid = (await agentStatus(root)).runtimeService?.pid;
        return typeof pid === 'number' && pid !== ctrdPid && running(pid) ? pid : undefined;
      });
      const listed = await waitFor('the containers listed again', () =>
        runningContainers(endpoint).then(
          (c) => (c.length === containers.length ? c : undefined),
          () => undefined,
        ),
      );
      assert.deepEqual(listed, containers);
      ctrdPid = restarted;

      // down --all --agent: nothing of the root dir's containerd is left.
      const down = await runCli(['down', '--all', '--agent', '--grace-period=0', `--root-dir=${root}`]);
      assert.equal(down.code, 0, down.stderr);
      assert.equal((await agent.exited).code, 0, agent.stderr());
      assert.ok(!running(ctrdPid), `containerd stopped\n${down.stdout}\n${down.stderr}\n${agent.stderr().slice(-4000)}`);
      assert.ok(!existsSync(layout.socket));
      assert.deepEqual(mountsUnder(root), []);
      const bridge = await run('ip', ['link', 'show', bridgeName(root)]).then(
        () => 'present',
        () => 'gone',
      );
      assert.equal(bridge, 'gone');
      assert.deepEqual(await namespacesIn(defaultPodCIDR(root)), []);
    } finally {
      // Whatever a failure left: the agent, the sandboxes, containerd and its mounts.
      await runCli(['agent', 'stop', `--root-dir=${root}`]).catch(() => undefined);
      if (existsSync(layout.socket)) await removeAllSandboxes(endpoint).catch(() => undefined);
      for (const pid of ctrdPids(root)) process.kill(pid, 'SIGKILL');
      for (const m of mountsUnder(root)) await run('umount', ['-l', m]).catch(() => undefined);
      await run('ip', ['link', 'del', bridgeName(root)]).catch(() => undefined);
    }
  },
);

test(
  'doctor --runtime=containerd without an endpoint: the host binaries, then the containerd podvisor starts, checked and stopped again',
  { skip },
  async () => {
    const root = join(dir, 'doctor-root');
    const r = await runCli(['doctor', '--runtime=containerd', `--pod-infra-container-image=${reg.images.pause}`, `--root-dir=${root}`]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^\[ok\] {3}containerd at \S+, runc at \S+, CNI plugins in \S+$/m);
    assert.match(r.stdout, /^\[ok\] {3}containerd starts with the config podvisor writes /m);
    assert.match(r.stdout, new RegExp(`^\\[ok\\] {3}sandbox \\(pause\\) image ${reg.images.pause!.replace(/[.]/g, '\\.')} is (present|pulled)$`, 'm'));
    assert.match(r.stdout, /^\[ok\] {3}containerd NetworkReady$/m);
    assert.match(r.stdout, /^no problems found\n$/m);
    assert.deepEqual(ctrdPids(root), [], 'the containerd started for the check is stopped again');
    assert.deepEqual(mountsUnder(root), []);
  },
);

test('doctor --runtime=containerd on a host without containerd: FAIL naming the package, exit 1', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'podvisor-nopath-'));
  try {
    const child = spawnSync(process.execPath, [mainJs, 'doctor', '--runtime=containerd', `--root-dir=${join(empty, 'root')}`], {
      env: { ...process.env, PATH: empty },
      encoding: 'utf8',
    });
    assert.equal(child.status, 1, child.stderr);
    assert.match(child.stdout, /^\[FAIL\] containerd is not on PATH\n {7}fix: apt-get install containerd$/m);
    assert.match(child.stdout, /^\[FAIL\] runc is not on PATH\n {7}fix: apt-get install runc$/m);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test(
  'up -d -f of a Deployment without command, with no --runtime and no other setup: containerd is chosen, said in one line, and runs it with its own pause image',
  { skip },
  async () => {
    const root = join(dir, 'auto-root');
    const manifest = join(dir, 'auto.yaml');
    writeFileSync(manifest, deployment(reg.images.web!));
    try {
      // No other setup: the sandbox image is podvisor's own, loaded without a registry.
      const r = await runCli(['up', '-d', '-f', manifest, '--wait=ready', '--timeout=90s', `--root-dir=${root}`]);
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(
        r.stderr,
        /^runtime: containerd \(1 container has no command \(deployment\.apps\/web: container httpd\): they run their images' entrypoints, on the containerd podvisor starts\)$/m,
      );
      assert.equal((await agentStatus(root)).runtimeService?.endpoint, `unix://${managedContainerdLayout(root).socket}`);
      assert.match(readFileSync(managedContainerdLayout(root).config, 'utf8'), /sandbox_image = "localhost\/podvisor\/pause:1"/);
    } finally {
      await runCli(['down', '--all', '--agent', '--grace-period=0', `--root-dir=${root}`]);
      assert.deepEqual(ctrdPids(root), []);
    }
  },
);

test('run -f of a pod without command on a host without containerd: the process runtime, why, and the refusal before anything starts (exit 2)', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'podvisor-nopath-'));
  try {
    const manifest = join(empty, 'pod.yaml');
    writeFileSync(manifest, 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: nginx, image: nginx}\n');
    const child = spawnSync(process.execPath, [mainJs, 'run', '-f', manifest, `--root-dir=${join(empty, 'root')}`], {
      env: { ...process.env, PATH: empty },
      encoding: 'utf8',
    });
    assert.equal(child.status, 2, child.stderr);
    assert.match(
      child.stderr,
      /^runtime: process \(1 container has no command \(pod\/web: container nginx\), and containerd cannot run here: containerd is not on PATH \(apt-get install containerd\); /m,
    );
    assert.match(child.stderr, /spec\.containers\[0\]\.command: Required value/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test("the node's docker config.json (here the root dir's, as the kubelet's /var/lib/kubelet/config.json) authenticates pulls", { skip }, async () => {
  const root = join(dir, 'auth-root');
  mkdirSync(root, { recursive: true });
  const auth = Buffer.from(`${reg.authUser}:${reg.authPassword}`).toString('base64');
  writeFileSync(join(root, 'config.json'), JSON.stringify({ auths: { [reg.authRegistry]: { auth } } }));
  const manifest = join(dir, 'auth.yaml');
  writeFileSync(
    manifest,
    `apiVersion: v1
kind: Pod
metadata: {name: private}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: ${reg.authRegistry}/podvisor-test/busybox:v1
    command: [sh, -c, 'touch /tmp/up; exec sleep 3600']
    readinessProbe: {exec: {command: [test, -f, /tmp/up]}, periodSeconds: 1}
`,
  );
  try {
    const r = await runCli([
      'run',
      '-f',
      manifest,
      '--wait=ready',
      '--runtime=containerd',
      `--pod-infra-container-image=${reg.images.pause}`,
      `--root-dir=${root}`,
    ]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^private\s+1\/1\s+Running/m);
  } finally {
    assert.deepEqual(ctrdPids(root), []);
  }
});

test('--registry-config: a hosts.toml mirror serves docker.io images under their original names', { skip }, async () => {
  const root = join(dir, 'mirror-root');
  const hosts = join(dir, 'registry-config');
  mkdirSync(join(hosts, 'docker.io'), { recursive: true });
  writeFileSync(
    join(hosts, 'docker.io', 'hosts.toml'),
    `server = "https://registry-1.docker.io"\n\n[host."http://${reg.registry}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  const manifest = join(dir, 'mirror.yaml');
  writeFileSync(
    manifest,
    `apiVersion: v1
kind: Pod
metadata: {name: mirrored}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: podvisor-test/web:v1
    readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}
`,
  );
  try {
    const r = await runCli(['run', '-f', manifest, '--wait=ready', '--runtime=containerd', `--registry-config=${hosts}`, `--root-dir=${root}`]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^mirrored\s+1\/1\s+Running/m);
    const ls = await runCli(['image', 'ls', `--root-dir=${root}`]);
    assert.match(ls.stdout, /^docker\.io\/podvisor-test\/web\s+v1\s/m);
  } finally {
    assert.deepEqual(ctrdPids(root), []);
  }
});

test("image pull: an image from a registry into the root dir's containerd; a missing one fails with the registry's answer", { skip }, async () => {
  const root = join(dir, 'pull-root');
  const pulled = await runCli(['image', 'pull', reg.images.busybox!, `--root-dir=${root}`]);
  assert.equal(pulled.code, 0, pulled.stderr);
  assert.match(pulled.stdout, /^Image is up to date for sha256:[0-9a-f]{64}$/m);
  const ls = await runCli(['image', 'ls', '-o', 'json', `--root-dir=${root}`]);
  const images = (JSON.parse(ls.stdout) as { images: Array<{ repoTags: string[] }> }).images;
  assert.ok(
    images.some((i) => i.repoTags.includes(reg.images.busybox!)),
    ls.stdout,
  );
  const missing = await runCli(['image', 'pull', `${reg.registry}/podvisor-test/nothing:v1`, `--root-dir=${root}`]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: .*podvisor-test\/nothing:v1.*not found/m);
  assert.deepEqual(ctrdPids(root), []);
});
