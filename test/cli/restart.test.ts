// kill -9 of `podvisor up` with pods of every kind running (HTTP and exec probes, a crash-looping
// container, a sidecar, a chatty logger): the containers keep running under the runtime service, and
// `up` started again with the same root dir takes them back — the same container ids, no second
// process, restart counts kept, probes running, the log continuous — then stops them on SIGTERM,
// leaving no process and no runtime service behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { isAlive, runtimeServicePids, startCli, tempDir } from '../fixtures/cli/cli-process.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Plain pods beside the five of every kind, to make twenty: HTTP (on web's port) or exec probes. */
const EXTRA = 15;
const extraNames = Array.from({ length: EXTRA }, (_, i) => `extra${i}`);

function manifests(dir: string, port: number): string {
  const pid = (name: string) => `echo $$$$ > ${dir}/${name}.pid`;
  const http = `require('http').createServer((q, r) => r.end('ok')).listen(${port}, '127.0.0.1')`;
  const extras = extraNames
    .map(
      (name, i) => `
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "${pid(name)}; exec sleep 300"]
    ${i % 2 === 0 ? `livenessProbe: {httpGet: {path: /, port: ${port}}, periodSeconds: 2}` : 'readinessProbe: {exec: {command: ["true"]}, periodSeconds: 2}'}`,
    )
    .join('');
  return (
    extras +
    `
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: node
    command: ["sh", "-c", "${pid('web')}; exec ${process.execPath} -e \\"${http}\\""]
    readinessProbe: {httpGet: {path: /, port: ${port}}, periodSeconds: 1}
    livenessProbe: {httpGet: {path: /, port: ${port}}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: exec}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "${pid('exec')}; exec sleep 300"]
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
    livenessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "sleep 0.3; exit 1"]
---
apiVersion: v1
kind: Pod
metadata: {name: side}
spec:
  terminationGracePeriodSeconds: 2
  initContainers:
  - name: proxy
    image: busybox
    restartPolicy: Always
    command: ["sh", "-c", "${pid('proxy')}; exec sleep 300"]
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "${pid('side')}; exec sleep 300"]
---
apiVersion: v1
kind: Pod
metadata: {name: logger}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "${pid('logger')}; i=0; while :; do i=$$((i+1)); echo n $$i; sleep 0.05; done"]
`
  );
}

const stable = ['web', 'exec', 'proxy', 'side', 'logger', ...extraNames];

/** Container ids by pod/container name, from the runtime service's state files. */
function runtimeContainers(root: string): Map<string, { id: string; state: string; restartCount: number }[]> {
  const out = new Map<string, { id: string; state: string; restartCount: number }[]>();
  const dir = join(root, 'runtime', 'containers');
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.json')) continue;
    let text: string;
    try {
      text = readFileSync(join(dir, f), 'utf8');
    } catch {
      continue; // removed meanwhile (an old instance pruned)
    }
    const c = JSON.parse(text) as { status: { id: string; state: string; labels: Record<string, string>; metadata: { attempt: number } } };
    const key = `${c.status.labels['io.kubernetes.pod.name']}/${c.status.labels['io.kubernetes.container.name']}`;
    out.set(key, [...(out.get(key) ?? []), { id: c.status.id, state: c.status.state, restartCount: c.status.metadata.attempt }]);
  }
  return out;
}

function logNumbers(root: string): number[] {
  const podDir = readdirSync(join(root, 'pods')).find((d) => d.startsWith('default_logger_'))!;
  return readFileSync(join(root, 'pods', podDir, 'app', '0.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => Number(l.split(' ')[4]));
}

interface ListedPod {
  metadata: { name: string };
  status: {
    containerStatuses?: Array<{ name: string; containerID?: string; restartCount: number; ready: boolean; state: { running?: object } }>;
    initContainerStatuses?: Array<{ name: string; containerID?: string; restartCount: number }>;
  };
}

test('kill -9 of up with 20 pods: the pods keep running and the next up adopts them', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'pods.yaml');
  writeFileSync(file, manifests(tmp.path, await freePort()));
  const pidOf = (name: string) => Number(readFileSync(join(tmp.path, `${name}.pid`), 'utf8'));
  const args = ['up', '-f', file, '--root-dir', root, '-o', 'json'];
  let up = startCli(args);
  try {
    await waitFor(
      'every pod running',
      () =>
        stable.every((n) => {
          try {
            return isAlive(pidOf(n));
          } catch {
            return false;
          }
        }),
      60_000,
    );
    await waitFor('crash restarted once', () => (runtimeContainers(root).get('crash/app')?.length ?? 0) >= 2, 60_000);
    await waitFor('logger logging', () => logNumbers(root).length >= 10);
    const stableKeys = ['web/app', 'exec/app', 'side/proxy', 'side/app', 'logger/app', ...extraNames.map((n) => `${n}/app`)];
    await waitFor('recorded running', () =>
      stableKeys.every((k) =>
        runtimeContainers(root)
          .get(k)
          ?.some((c) => c.state === 'CONTAINER_RUNNING'),
      ),
    );
    const pids = new Map(stable.map((n) => [n, pidOf(n)]));
    const before = runtimeContainers(root);

    up.child.kill('SIGKILL');
    await up.exited;
    // Without the agent every container keeps running (and the crash-looping one stays down, not lost).
    const linesAtDeath = logNumbers(root).length;
    const stopped = () => [...pids].filter(([, pid]) => !isAlive(pid)).map(([n]) => n);
    await holdsFor(
      () => `every container keeps running without the agent (stopped: ${stopped().join(', ')})`,
      () => stopped().length === 0,
      500,
    );
    await waitFor('logging goes on without the agent', () => logNumbers(root).length > linesAtDeath);
    const servicesBefore = await runtimeServicePids(tmp.path);
    assert.equal(servicesBefore.length, 1, 'one runtime service');

    up = startCli(args);
    // The next up settles: readiness from its probes, the crash loop going on.
    await waitFor('runtime state readable', async () => {
      const after = runtimeContainers(root);
      return (after.get('crash/app')?.length ?? 0) >= 1;
    });
    await waitFor(
      () => `web and exec ready again under the next up; its stderr:\n${up.stderr()}`,
      () => ['web', 'exec'].every((n) => up.stderr().includes(`pod/${n}: Running, ready 1/1`)),
      60_000,
    );
    const replaced = () => [...pids].filter(([n, pid]) => pidOf(n) !== pid || !isAlive(pid)).map(([n]) => n);
    await holdsFor(
      () => `no second process started, every first one running (not so: ${replaced().join(', ')})`,
      () => replaced().length === 0,
      3000,
    );
    const after = runtimeContainers(root);
    for (const key of stableKeys) {
      const running = (after.get(key) ?? []).filter((c) => c.state === 'CONTAINER_RUNNING');
      assert.deepEqual(
        running.map((c) => c.id),
        (before.get(key) ?? []).filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.id),
        `${key}: the same container id runs`,
      );
    }
    assert.deepEqual(await runtimeServicePids(tmp.path), servicesBefore, 'the same runtime service');

    up.child.kill('SIGTERM');
    const exit = await up.exited;
    assert.equal(exit.code, 0, up.stderr());
    const list = JSON.parse(up.stdout()) as { items: Array<ListedPod & { kind: string }> };
    const pod = (name: string) => list.items.find((i) => i.kind === 'Pod' && i.metadata.name === name)!;
    for (const name of ['web', 'exec', 'logger', ...extraNames]) {
      const cs = pod(name).status.containerStatuses![0]!;
      assert.equal(cs.restartCount, 0, `${name}: restart count unchanged`);
      assert.ok(cs.state.running, `${name} was running`);
      assert.equal(cs.containerID, `process://${before.get(`${name}/app`)!.find((c) => c.state === 'CONTAINER_RUNNING')!.id}`);
    }
    for (const name of ['web', 'exec']) assert.equal(pod(name).status.containerStatuses![0]!.ready, true, `${name}: probes resumed`);
    const crash = pod('crash').status.containerStatuses![0]!;
    assert.ok(crash.restartCount >= Math.max(...before.get('crash/app')!.map((c) => c.restartCount)), 'crash loop count kept');
    assert.equal(pod('side').status.initContainerStatuses![0]!.restartCount, 0);

    const numbers = logNumbers(root);
    numbers.forEach((n, i) => assert.equal(n, i + 1, 'the log is continuous'));
    for (const [n, pid] of pids) assert.ok(!isAlive(pid), `${n} stopped by the second up`);
    await waitFor('the runtime service stopped once it held nothing', async () => (await runtimeServicePids(tmp.path)).every((p) => !isAlive(p)), 20_000);
  } finally {
    up.child.kill('SIGKILL');
    await tmp.remove();
  }
});
