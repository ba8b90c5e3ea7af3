// The agent as a CRI client of the process runtime service, with real processes: `kill -9` of the
// agent with 20 pods of every kind (HTTP and exec probes, a crash loop, a sidecar) and a restart takes
// them over as they are; `kill -9` of the runtime service has it started again and re-adopting; SIGTERM
// leaves containers running; a static file removed while the agent was down ends its pod on start.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { isAlive, runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { call } from './helpers.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

const sock = (root: string) => join(root, 'podvisor.sock');

async function startAgent(root: string, args: string[] = []): Promise<CliProcess> {
  const p = startCli(['agent', '--root-dir', root, '--file-check-frequency', '1s', ...args]);
  await p.waitFor('stderr', /podvisor agent started/, 60_000);
  return p;
}

async function pods(root: string): Promise<Pod[]> {
  return (await call(sock(root), 'GET', '/pods')).json().items;
}

async function status(root: string): Promise<any> {
  const st = await runCli(['agent', 'status', '--root-dir', root, '-o', 'json']);
  assert.equal(st.code, 0, st.stderr);
  return JSON.parse(st.stdout);
}

/**
 * Processes whose command line holds the marker (one per container: its shell or server). A shell's
 * fork, for the instant before it execs its command, carries the same command line: a process whose
 * parent holds the marker too is that fork, not a second container.
 */
function processesWith(marker: string): number[] {
  const found = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const args = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (!args.includes(marker)) continue;
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      found.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

const ready = (p: Pod | undefined) => !!p && p.status?.phase === 'Running' && !!p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/** A pod as YAML: one container running `sh -c script MARKER` (the marker is its $0, in its cmdline). */
function shellPodYaml(name: string, script: string, marker: string, extra = '', podExtra = ''): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 2
${podExtra}  containers:
  - name: main
    image: busybox
    command: ["/bin/sh", "-c", ${JSON.stringify(script)}, "${marker}"]
${extra}`;
}

const ticker = 'i=0; trap "exit 0" TERM; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done';
const execProbes = `    readinessProbe:
      exec:
        command: ["true"]
      periodSeconds: 1
      timeoutSeconds: 10
    livenessProbe:
      exec:
        command: ["true"]
      periodSeconds: 1
      timeoutSeconds: 10
      failureThreshold: 10
`;
const httpProbes = (port: number) => `    readinessProbe:
      httpGet: {path: /, port: ${port}}
      periodSeconds: 1
      timeoutSeconds: 10
    livenessProbe:
      httpGet: {path: /, port: ${port}}
      periodSeconds: 1
      timeoutSeconds: 10
      failureThreshold: 10
`;

function httpPodYaml(name: string, port: number, marker: string): string {
  const server = `require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1'); process.on('SIGTERM', () => process.exit(0))`;
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: node
    command: [${JSON.stringify(process.execPath)}, "-e", ${JSON.stringify(server)}, "${marker}"]
${httpProbes(port)}`;
}

function sidecarPodYaml(name: string, marker: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 2
  initContainers:
  - name: side
    image: busybox
    restartPolicy: Always
    command: ["/bin/sh", "-c", ${JSON.stringify(ticker)}, "${marker}-side"]
  containers:
  - name: main
    image: busybox
    command: ["/bin/sh", "-c", ${JSON.stringify(ticker)}, "${marker}"]
${execProbes}`;
}

interface Snapshot {
  uid: string;
  ids: Record<string, string>;
  restarts: Record<string, number>;
}

function snapshot(p: Pod): Snapshot {
  const all = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];
  return {
    uid: p.metadata!.uid!,
    ids: Object.fromEntries(all.map((c) => [c.name, c.containerID ?? ''])),
    restarts: Object.fromEntries(all.map((c) => [c.name, c.restartCount])),
  };
}

async function killAgent(agent: CliProcess): Promise<void> {
  agent.child.kill('SIGKILL');
  await agent.exited;
}

test('kill -9 of the agent with 20 pods, then of the runtime service: everything is taken over as it was; down leaves no process', async () => {
  const dir = await tempDir('podvisor-restart-');
  const root = join(dir.path, 'root');
  const manifests = join(dir.path, 'manifests');
  await mkdir(manifests);
  const tag = `pv${process.pid}x${Date.now() % 100000}`;
  const basePort = 20000 + Math.floor(Math.random() * 20000);
  // 5 static pods (files), 15 applied through the API.
  const apiDocs: string[] = [];
  const markers = new Map<string, string[]>();
  for (let i = 0; i < 5; i++) {
    const name = `http-${i}`;
    markers.set(name, [`${tag}-${name}`]);
    apiDocs.push(httpPodYaml(name, basePort + i, `${tag}-${name}`));
  }
  for (let i = 0; i < 8; i++) {
    const name = `exec-${i}`;
    markers.set(name, [`${tag}-${name}`]);
    const yaml = shellPodYaml(name, ticker, `${tag}-${name}`, execProbes);
    if (i < 4) await writeFile(join(manifests, `${name}.yaml`), yaml);
    else apiDocs.push(yaml);
  }
  for (let i = 0; i < 5; i++) {
    const name = `ticker-${i}`;
    markers.set(name, [`${tag}-${name}`]);
    const yaml = shellPodYaml(name, ticker, `${tag}-${name}`);
    if (i === 0) await writeFile(join(manifests, `${name}.yaml`), yaml);
    else apiDocs.push(yaml);
  }
  apiDocs.push(sidecarPodYaml('sidecar', `${tag}-sidecar`));
  // Applied without waiting: a crash loop's container runs only for moments.
  const crashFile = join(dir.path, 'crash.yaml');
  await writeFile(crashFile, shellPodYaml('crash', 'echo crashing; sleep 0.3; exit 3', `${tag}-crash`));
  markers.set('sidecar', [`${tag}-sidecar`, `${tag}-sidecar-side`]);
  const apiFile = join(dir.path, 'pods.yaml');
  await writeFile(apiFile, apiDocs.join('---\n'));
  const steady = [...markers.keys()];

  let agent = await startAgent(root, ['--pod-manifest-path', manifests]);
  try {
    const up = await runCli(['up', '-d', '-f', apiFile, '--root-dir', root, '--wait=running', '--timeout', '150s'], 180_000);
    assert.equal(up.code, 0, up.stderr);
    const crash = await runCli(['up', '-d', '-f', crashFile, '--root-dir', root, '--timeout', '1s']);
    assert.match(crash.stdout, /pod\/crash created/);
    const all = await pods(root);
    assert.equal(all.length, 20);
    await waitFor(
      'every pod ready, the crash loop restarted once',
      async () => {
        const ps = await pods(root);
        const crash = ps.find((p) => p.metadata?.name === 'crash');
        return steady.every((n) => ready(ps.find((p) => p.metadata?.name === n))) && (crash?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1;
      },
      120_000,
    );
    const before = new Map((await pods(root)).map((p) => [p.metadata!.name!, snapshot(p)]));
    for (const [name, ms] of markers) for (const m of ms) assert.equal(processesWith(m).length, 1, `${name}: one process of ${m}`);

    // kill -9: the containers keep running and logging, unsupervised by any agent.
    await killAgent(agent);
    const tickerMarker = `${tag}-ticker-1`;
    const notRunning = () => [...markers].flatMap(([name, ms]) => ms.filter((m) => processesWith(m).length !== 1).map((m) => `${name}: ${m}`));
    await holdsFor(
      () => `every container running without the agent (not: ${notRunning().join(', ')})`,
      () => notRunning().length === 0,
      1500,
    );

    agent = await startAgent(root, ['--pod-manifest-path', manifests]);
    assert.match(agent.stderr(), /Took over the pods the runtime still runs/);
    await waitFor(
      'every pod ready again after the agent restart',
      async () => {
        const ps = await pods(root);
        // The crash loop's status too: the new agent reports it once its worker has synced the pod.
        const crash = ps.find((p) => p.metadata?.name === 'crash');
        return ps.length === 20 && steady.every((n) => ready(ps.find((p) => p.metadata?.name === n))) && crash?.status?.containerStatuses?.[0] !== undefined;
      },
      120_000,
    );
    const after = new Map((await pods(root)).map((p) => [p.metadata!.name!, snapshot(p)]));
    for (const name of steady) {
      const b = before.get(name)!;
      const a = after.get(name)!;
      assert.equal(a.uid, b.uid, `${name}: same UID`);
      const seen = () =>
        `${name}; agent log:\n${agent
          .stderr()
          .split('\n')
          .filter((l) => l.includes(name))
          .join('\n')}`;
      assert.deepEqual(a.ids, b.ids, `same container ids: ${seen()}`);
      assert.deepEqual(a.restarts, b.restarts, `restart counts unchanged: ${seen()}`);
    }
    const crashBefore = before.get('crash')!;
    const crashAfter = (await pods(root)).find((p) => p.metadata?.name === 'crash')!;
    assert.equal(crashAfter.metadata!.uid, crashBefore.uid);
    assert.ok(crashAfter.status!.containerStatuses![0]!.restartCount >= crashBefore.restarts.main!, 'crash loop restart count kept');
    assert.equal(crashAfter.status!.containerStatuses![0]!.lastState?.terminated?.exitCode, 3);
    for (const [name, ms] of markers) for (const m of ms) assert.equal(processesWith(m).length, 1, `${name}: no duplicate process after the restart`);

    // Probes run in the new agent (its metrics started from nothing).
    await waitFor(
      'liveness probes of http-0 counted by the new agent',
      async () => {
        const text = (await call(sock(root), 'GET', '/metrics/probes')).body;
        return text
          .split('\n')
          .some(
            (l) =>
              l.startsWith('prober_probe_total{') &&
              l.includes('pod="http-0"') &&
              l.includes('probe_type="Liveness"') &&
              l.includes('result="successful"') &&
              Number(l.split(' ').pop()) > 0,
          );
      },
      60_000,
    );

    // Logs are continuous: the ticker counted on through the agent's absence, with no gap or reset.
    await waitFor('continuous ticker log', async () => {
      const body = (await call(sock(root), 'GET', '/containerLogs/default/ticker-1/main')).body;
      const n = body
        .trim()
        .split('\n')
        .map((l) => Number(/^tick ([0-9]+)$/.exec(l)?.[1]));
      if (n.length < 20) return false;
      n.forEach((v, i) => assert.equal(v, i + 1, `tick ${i + 1} in order`));
      return true;
    });
    assert.equal(processesWith(tickerMarker).length, 1);

    // kill -9 of the runtime service: started again on demand, it re-adopts the containers.
    const st = await status(root);
    const servicePid = st.runtimeService.pid as number;
    assert.ok(servicePid > 0 && isAlive(servicePid), JSON.stringify(st.runtimeService));
    process.kill(servicePid, 'SIGKILL');
    await waitFor(
      'a new runtime service',
      async () => {
        const pid = (await status(root)).runtimeService.pid as number | null;
        return !!pid && pid !== servicePid && isAlive(pid);
      },
      60_000,
    );
    for (const [name, ms] of markers) for (const m of ms) assert.equal(processesWith(m).length, 1, `${name} kept running without the runtime service`);
    await waitFor(
      'every pod ready with the new runtime service',
      async () => {
        const ps = await pods(root);
        return steady.every((n) => ready(ps.find((p) => p.metadata?.name === n)));
      },
      60_000,
    );
    const readopted = new Map((await pods(root)).map((p) => [p.metadata!.name!, snapshot(p)]));
    for (const name of steady) assert.deepEqual(readopted.get(name)!.ids, before.get(name)!.ids, `${name}: same containers after the runtime service restart`);

    // down --all and the static files removed: nothing is left running.
    const down = await runCli(['down', '--all', '--root-dir', root, '--grace-period', '1', '--timeout', '120s']);
    assert.equal(down.code, 0, down.stderr);
    await rm(manifests, { recursive: true });
    await mkdir(manifests);
    await waitFor('every pod gone', async () => (await pods(root)).length === 0, 60_000);
    await waitFor('no container process left', () => [...markers.values()].flat().every((m) => processesWith(m).length === 0), 30_000);
  } finally {
    if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent.exited;
    await dir.remove();
  }
});

test('SIGTERM leaves containers running for the next agent; a static file removed meanwhile ends its pod on start, a broken one keeps it', async () => {
  const dir = await tempDir('podvisor-restart-');
  const root = join(dir.path, 'root');
  const manifests = join(dir.path, 'manifests');
  await mkdir(manifests);
  const tag = `pv${process.pid}y${Date.now() % 100000}`;
  await writeFile(join(manifests, 'keep.yaml'), shellPodYaml('keep', ticker, `${tag}-keep`));
  await writeFile(join(manifests, 'gone.yaml'), shellPodYaml('gone', ticker, `${tag}-gone`));
  let agent = await startAgent(root, ['--pod-manifest-path', manifests]);
  try {
    await waitFor(
      'both static pods running',
      async () => {
        const ps = await pods(root);
        return ps.length === 2 && ps.every((p) => p.status?.containerStatuses?.[0]?.state?.running);
      },
      60_000,
    );
    const keepBefore = snapshot((await pods(root)).find((p) => p.metadata?.name === 'keep')!);

    agent.child.kill('SIGTERM');
    const ended = await agent.exited;
    assert.equal(ended.code, 0);
    assert.match(agent.stderr(), /containers keep running/);
    assert.equal(processesWith(`${tag}-keep`).length, 1);
    assert.equal(processesWith(`${tag}-gone`).length, 1);

    await rm(join(manifests, 'gone.yaml'));
    agent = await startAgent(root, ['--pod-manifest-path', manifests]);
    await waitFor("the removed file's pod terminated on start", () => processesWith(`${tag}-gone`).length === 0, 30_000);
    await waitFor('only keep, running', async () => {
      const ps = await pods(root);
      return ps.length === 1 && !!ps[0]!.status?.containerStatuses?.[0]?.state?.running;
    });
    const keepAfter = snapshot((await pods(root))[0]!);
    assert.equal(keepAfter.uid, keepBefore.uid);
    assert.deepEqual(keepAfter.ids, keepBefore.ids);
    assert.deepEqual(keepAfter.restarts, keepBefore.restarts);
    assert.equal(processesWith(`${tag}-keep`).length, 1);

    // A file half-written while the agent was down: its pod is kept running (not taken over, not
    // ended), and taken over as it is once the file is back.
    agent.child.kill('SIGTERM');
    await agent.exited;
    const keepYaml = shellPodYaml('keep', ticker, `${tag}-keep`);
    await writeFile(join(manifests, 'keep.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: keep}\nspec:\n  containers: [');
    agent = await startAgent(root, ['--pod-manifest-path', manifests]);
    assert.match(agent.stderr(), /Keeping a running pod whose source could not be read/);
    assert.equal((await pods(root)).length, 0);
    await holdsFor('the pod of the half-written file kept running', () => processesWith(`${tag}-keep`).length === 1, 1000);
    await writeFile(join(manifests, 'keep.yaml'), keepYaml);
    await waitFor('keep back from its fixed file', async () => {
      const ps = await pods(root);
      return ps.length === 1 && !!ps[0]!.status?.containerStatuses?.[0]?.state?.running;
    });
    assert.deepEqual(snapshot((await pods(root))[0]!).ids, keepBefore.ids);
    assert.equal(processesWith(`${tag}-keep`).length, 1);

    await rm(join(manifests, 'keep.yaml'));
    await waitFor('keep ends with its file', () => processesWith(`${tag}-keep`).length === 0, 30_000);
  } finally {
    if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent.exited;
    await dir.remove();
  }
});
