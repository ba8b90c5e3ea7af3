// `podvisor up` end to end through the built CLI: the -o json List contract (Pods as observed before
// termination, then every Event), the event stream, --logs prefixes, SIGTERM shutdown, a second
// SIGINT killing at once, and rejected pods.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { containerPids, fixture, isAlive, runCli, startCli, tempDir } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';

interface Item {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  reason?: string;
  type?: string;
  involvedObject?: { name: string; kind: string };
  status?: {
    phase: string;
    reason?: string;
    containerStatuses?: { name: string; ready: boolean; state: { running?: object } }[];
    conditions?: { type: string; status: string }[];
  };
}

test('up --for=3s -o json: one List, the Pods as they were before termination, then every Event', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['up', '-f', fixture('two-running.yaml'), '--root-dir', join(tmp.path, 'root'), '--for=3s', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout) as { apiVersion: string; kind: string; metadata: object; items: Item[] };
    assert.deepEqual([list.apiVersion, list.kind, list.metadata], ['v1', 'List', { resourceVersion: '' }]);
    const kinds = list.items.map((i) => i.kind);
    const firstEvent = kinds.indexOf('Event');
    assert.deepEqual(kinds.slice(0, firstEvent), ['Pod', 'Pod'], 'Pods first');
    assert.ok(
      kinds.slice(firstEvent).every((k) => k === 'Event'),
      'then only Events',
    );
    for (const pod of list.items.slice(0, firstEvent)) {
      assert.equal(pod.apiVersion, 'v1');
      assert.equal(pod.status!.phase, 'Running', `${pod.metadata.name} observed before termination`);
      for (const cs of pod.status!.containerStatuses!) {
        assert.ok(cs.state.running, `${cs.name} running`);
        assert.equal(cs.ready, true);
      }
      assert.ok(pod.status!.conditions!.some((c) => c.type === 'Ready' && c.status === 'True'));
    }
    const events = list.items.slice(firstEvent);
    for (const ev of events) assert.equal(ev.apiVersion, 'v1');
    const reasons = (pod: string) => events.filter((e) => e.involvedObject!.name === pod).map((e) => e.reason);
    for (const pod of ['web', 'worker']) {
      assert.ok(reasons(pod).includes('Started'), `${pod}: Started`);
      assert.ok(reasons(pod).includes('Killing'), `${pod}: Killing (termination included)`);
    }
    // The event stream on stderr: the header once, a line per event.
    assert.equal(r.stderr.match(/^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$/gm)?.length, 1);
    assert.match(r.stderr, /Normal +Started +pod\/web +Started container app/);
    assert.match(r.stderr, /Normal +Killing +pod\/worker +Stopping container main/);
    assert.match(r.stderr, /stopping 2 pods gracefully\n/);
  } finally {
    await tmp.remove();
  }
});

test('up stops every pod gracefully on SIGTERM and exits 0', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const p = startCli(['up', '-f', fixture('two-running.yaml'), '--root-dir', root]);
  try {
    await p.waitFor('stderr', /Started +pod\/web[\s\S]*Started +pod\/worker|Started +pod\/worker[\s\S]*Started +pod\/web/);
    await waitFor('both containers wrote their pid', async () => (await containerPids(root)).size === 2);
    const pids = await containerPids(root);
    for (const pid of pids.values()) assert.ok(isAlive(pid));
    p.child.kill('SIGTERM');
    const { code } = await p.exited;
    assert.equal(code, 0, p.stderr());
    assert.match(p.stderr(), /SIGTERM: stopping 2 pods gracefully\n/);
    assert.match(p.stderr(), /all pods stopped\n/);
    for (const pid of pids.values()) assert.equal(isAlive(pid), false, `container ${pid} gone`);
    assert.equal(p.stdout(), '');
  } finally {
    p.child.kill('SIGKILL');
    await tmp.remove();
  }
});

test('a second SIGINT kills at once a container that ignores SIGTERM with a 300 s grace period', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const p = startCli(['up', '-f', fixture('ignores-term.yaml'), '--root-dir', root]);
  try {
    await p.waitFor('stderr', /Started +pod\/stubborn/);
    await waitFor('the container wrote its pid', async () => (await containerPids(root)).has('stubborn'));
    const pid = (await containerPids(root)).get('stubborn')!;
    p.child.kill('SIGINT');
    await p.waitFor('stderr', /Killing +pod\/stubborn/);
    assert.ok(isAlive(pid), 'SIGTERM is ignored: still running within its grace period');
    p.child.kill('SIGINT');
    const exited = await Promise.race([p.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 60_000))]);
    assert.ok(exited, 'the CLI exits long before the 300 s grace period');
    await waitFor('the container process is gone', () => !isAlive(pid), 10_000);
  } finally {
    p.child.kill('SIGKILL');
    await tmp.remove();
  }
});

test('--logs prefixes container output with pod/container, on stdout, or stderr with -o', async () => {
  const tmp = await tempDir();
  try {
    const plain = await runCli(['up', '-f', fixture('chatty.yaml'), '--root-dir', join(tmp.path, 'a'), '--for=2s', '--logs']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^chatty\/talker \| hello from talker$/m);
    assert.match(plain.stdout, /^chatty\/talker \| warning line$/m);

    const json = await runCli(['up', '-f', fixture('chatty.yaml'), '--root-dir', join(tmp.path, 'b'), '--for=2s', '--logs', '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).kind, 'List', 'stdout holds only the List');
    assert.match(json.stderr, /^chatty\/talker \| hello from talker$/m);
  } finally {
    await tmp.remove();
  }
});

test('a rejected pod is reported and not started, and up exits 1; the List shows it Failed with its Warning event', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['up', '-f', fixture('too-big.yaml'), '--root-dir', join(tmp.path, 'root'), '--node-cpu=1', '--for=2s', '-o', 'yaml']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /pod\/big rejected: OutOfcpu: Node didn't have enough resource: cpu, requested: 2000, used: 500, capacity: 1000\n/);
    assert.match(r.stderr, /Warning +OutOfcpu +pod\/big/);
    const { parse } = await import('yaml');
    const list = parse(r.stdout) as { items: Item[] };
    const big = list.items.find((i) => i.kind === 'Pod' && i.metadata.name === 'big')!;
    assert.deepEqual([big.status!.phase, big.status!.reason], ['Failed', 'OutOfcpu']);
    assert.ok(list.items.some((i) => i.kind === 'Event' && i.type === 'Warning' && i.reason === 'OutOfcpu' && i.involvedObject!.name === 'big'));
    const started = list.items.filter((i) => i.kind === 'Event' && i.reason === 'Started').map((i) => i.involvedObject!.name);
    assert.deepEqual(started, ['small']);
  } finally {
    await tmp.remove();
  }
});

test('up: invalid input exits 2 and starts nothing', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['up', '-f', fixture('invalid.yaml'), '--root-dir', join(tmp.path, 'root'), '--for=1s']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /The Pod "bad" is invalid/);
    const u = await runCli(['up', '-f', fixture('chatty.yaml'), '--root-dir', join(tmp.path, 'root'), '--for=later']);
    assert.equal(u.code, 2);
    assert.deepEqual(await containerPids(join(tmp.path, 'root')), new Map());
  } finally {
    await tmp.remove();
  }
});

test('up exits by itself once every pod has finished: 0 when all Succeeded, 1 when one Failed; state lines and the pod table', async () => {
  const tmp = await tempDir();
  try {
    const ok = await runCli(['up', '-f', fixture('job-succeeds.yaml'), '--root-dir', join(tmp.path, 'a')]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /^pod\/job: Completed, ready 0\/1, restarts 0$/m);
    assert.match(ok.stderr, /every pod has finished: stopping 0 pods gracefully\n/);
    assert.match(ok.stderr, /\nNAME +READY +STATUS +RESTARTS +AGE\njob +0\/1 +Completed +0 +/);
    const bad = await runCli(['up', '-f', fixture('job-fails.yaml'), '--root-dir', join(tmp.path, 'b')]);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /\njob +0\/1 +Error +0 +/);
  } finally {
    await tmp.remove();
  }
});

test('the event stream keeps its columns aligned across lines', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['up', '-f', fixture('two-running.yaml'), '--root-dir', join(tmp.path, 'root'), '--for=2s']);
    assert.equal(r.code, 0, r.stderr);
    const table = r.stderr.split('\n').filter((l) => /^(LAST SEEN|\d+s) /.test(l));
    assert.ok(table.length > 3, r.stderr);
    const messageColumn = table[0]!.indexOf('MESSAGE');
    for (const l of table.slice(1)) assert.match(l.slice(messageColumn - 3, messageColumn), /^ {3}$/, l);
    for (const l of table.slice(1)) assert.notEqual(l[messageColumn], ' ', l);
  } finally {
    await tmp.remove();
  }
});
