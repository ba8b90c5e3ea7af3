// `podvisor run` end to end: real container processes through the built CLI, checking exit codes,
// the pod table, the failure summary with log lines, admission rejection, the wait modes, invalid
// input (nothing started) and the -o json List.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerPids, fixture, isAlive, listFiles, runCli, tempDir } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';

/** The table rows by pod name: [READY, STATUS, RESTARTS, AGE]. */
function tableRows(stdout: string): Map<string, string[]> {
  const lines = stdout.split('\n');
  assert.match(lines[0]!, /^NAME +READY +STATUS +RESTARTS +AGE$/);
  const rows = new Map<string, string[]>();
  for (const l of lines.slice(1)) {
    if (l.trim() === '') break;
    const cells = l.split(/ {3,}/);
    rows.set(cells[0]!, cells.slice(1));
  }
  return rows;
}

test('every pod running: exit 0, the table, then the pods are stopped gracefully', async () => {
  const tmp = await tempDir();
  try {
    const root = join(tmp.path, 'root');
    const r = await runCli(['run', '-f', fixture('two-running.yaml'), '--root-dir', root]);
    assert.equal(r.code, 0, r.stderr);
    const rows = tableRows(r.stdout);
    assert.deepEqual([...rows.keys()], ['web', 'worker']);
    for (const cells of rows.values()) assert.deepEqual(cells.slice(0, 3), ['1/1', 'Running', '0']);
    assert.match(r.stdout, /\nall 2 pods running\n$/);
    assert.match(r.stderr, /stopping 2 pods gracefully\n/);
    assert.match(r.stderr, /all pods stopped\n/);
    const pids = await containerPids(root);
    assert.equal(pids.size, 2);
    for (const pid of pids.values()) assert.equal(isAlive(pid), false, `container process ${pid} is gone`);
  } finally {
    await tmp.remove();
  }
});

test('a container that exits under restartPolicy Never: exit 1, its exit code and last log lines', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', fixture('exits-never.yaml'), '--root-dir', join(tmp.path, 'root'), '--retry-delay=100ms']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.deepEqual(tableRows(r.stdout).get('broken')!.slice(0, 2), ['0/1', 'Error']);
    assert.match(r.stdout, /1 of 1 pod failed:\npod\/broken: pod "broken_default\([0-9a-f]+\)" failed\n/);
    assert.match(r.stdout, /  container app: exit code 3 \(Error\)\n    last 2 log lines:\n    \| starting up\n    \| config missing\n/);
  } finally {
    await tmp.remove();
  }
});

test('a crash-looping container fails at once: exit 1, named with its waiting reason, exit code and logs', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', fixture('crashloop.yaml'), '--root-dir', join(tmp.path, 'root'), '--retry-delay=100ms', '--timeout=5s']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const rows = tableRows(r.stdout);
    assert.equal(rows.get('steady')![1], 'Running');
    assert.match(rows.get('crasher')![1]!, /^(CrashLoopBackOff|Error|Running)$/);
    assert.match(
      r.stdout,
      /1 of 2 pods failed:\npod\/crasher: pod "crasher_default\([0-9a-f]+\)" cannot become running: container app: CrashLoopBackOff: exited with code 2 \(Error\), 1 restart\n/,
    );
    assert.match(r.stdout, /  container app: (waiting: CrashLoopBackOff, last )?exit code 2 \(Error\)/);
    assert.match(r.stdout, /    \| attempt\n    \| boom\n/);
    assert.doesNotMatch(r.stdout, /pod\/steady:/);
    assert.match(r.stderr, /stopping 2 pods gracefully/);
  } finally {
    await tmp.remove();
  }
});

test('containers never running: the kubelet timeout error after 10 retries of the (short) retry delay', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', fixture('init-stuck.yaml'), '--root-dir', join(tmp.path, 'root'), '--retry-delay=10ms']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(tableRows(r.stdout).get('stuck')![1], 'Init:0/1');
    assert.match(
      r.stdout,
      /pod\/stuck: timeout error: pod "stuck_default\([0-9a-f]+\)" containers not running after 10 retries\n  container wait-forever: running, not finished\n/,
    );
  } finally {
    await tmp.remove();
  }
});

test('admission rejection: exit 1, the reason in the table, the pod never started', async () => {
  const tmp = await tempDir();
  try {
    const root = join(tmp.path, 'root');
    const r = await runCli(['run', '-f', fixture('too-big.yaml'), '--root-dir', root, '--node-cpu=1', '--node-memory=1Gi']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const rows = tableRows(r.stdout);
    assert.deepEqual(rows.get('small')!.slice(0, 2), ['1/1', 'Running']);
    assert.deepEqual(rows.get('big')!.slice(0, 3), ['0/1', 'OutOfcpu', '0']);
    assert.match(r.stdout, /pod\/big: rejected: OutOfcpu: Node didn't have enough resource: cpu, requested: 2000, used: 500, capacity: 1000\n/);
    assert.ok(!(await listFiles(root)).some((f) => f.endsWith('big-started')));
  } finally {
    await tmp.remove();
  }
});

test('--wait=ready waits for the readiness probe', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', fixture('readiness.yaml'), '--root-dir', join(tmp.path, 'root'), '--wait=ready', '--timeout=60s']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(tableRows(r.stdout).get('slow-ready')!.slice(0, 2), ['1/1', 'Running']);
    assert.match(r.stdout, /all 1 pod ready\n/);
  } finally {
    await tmp.remove();
  }
});

test('--wait=completed: Succeeded exits 0, Failed exits 1 with the logs', async () => {
  const tmp = await tempDir();
  try {
    const ok = await runCli(['run', '-f', fixture('job-succeeds.yaml'), '--root-dir', join(tmp.path, 'a'), '--wait=completed']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.deepEqual(tableRows(ok.stdout).get('job')!.slice(0, 2), ['0/1', 'Completed']);
    assert.match(ok.stdout, /all 1 pod succeeded\n/);
    assert.doesNotMatch(ok.stderr, /stopping/);

    const bad = await runCli(['run', '-f', fixture('job-fails.yaml'), '--root-dir', join(tmp.path, 'b'), '--wait=completed']);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.deepEqual(tableRows(bad.stdout).get('job')!.slice(0, 2), ['0/1', 'Error']);
    assert.match(bad.stdout, /  container work: exit code 1 \(Error\)\n    last 2 log lines:\n    \| working\n    \| failed hard\n/);
  } finally {
    await tmp.remove();
  }
});

test('invalid input: exit 2, every error, nothing started', async () => {
  const tmp = await tempDir();
  try {
    const root = join(tmp.path, 'root');
    const r = await runCli(['run', '-f', fixture('invalid.yaml'), '--root-dir', root]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /The Pod "bad" is invalid: /);
    assert.match(r.stderr, /spec\.restartPolicy: Unsupported value: "Sometimes"/);
    assert.match(r.stderr, /spec\.containers\[0\]\.readinessProbe\.periodSeconds: Invalid value: -1/);
    assert.deepEqual(await listFiles(root), [], 'no marker, no sandbox, no log');

    for (const args of [
      ['--runtime=podman'],
      ['--pod-cidr=10.1.0.0/16'],
      ['--timeout=soon'],
      ['--wait=forever'],
      ['--node-cpu=lots'],
      ['--max-container-restart-period=10m'],
      ['-o', 'xml'],
    ]) {
      const u = await runCli(['run', '-f', fixture('two-running.yaml'), '--root-dir', root, ...args]);
      assert.equal(u.code, 2, `${args.join(' ')}: ${u.stderr}`);
      assert.match(u.stderr, /^error: /);
    }
    assert.deepEqual(await listFiles(root), []);
  } finally {
    await tmp.remove();
  }
});

test('-o json: one v1 List of the Pods with status on stdout, the summary on stderr', async () => {
  const tmp = await tempDir();
  try {
    const r = await runCli([
      'run',
      '-f',
      fixture('two-running.yaml'),
      '-f',
      fixture('too-big.yaml'),
      '--root-dir',
      join(tmp.path, 'root'),
      '--node-cpu=1',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 1, r.stderr);
    const list = JSON.parse(r.stdout);
    assert.equal(list.apiVersion, 'v1');
    assert.equal(list.kind, 'List');
    assert.deepEqual(list.metadata, { resourceVersion: '' });
    assert.deepEqual(
      list.items.map((p: { kind: string; apiVersion: string }) => `${p.apiVersion}/${p.kind}`),
      ['v1/Pod', 'v1/Pod', 'v1/Pod', 'v1/Pod'],
    );
    const byName = new Map(list.items.map((p: { metadata: { name: string } }) => [p.metadata.name, p]));
    const web = byName.get('web') as {
      status: { phase: string; containerStatuses: { state: { running?: object } }[]; conditions: { type: string; status: string }[] };
    };
    assert.equal(web.status.phase, 'Running');
    assert.ok(web.status.containerStatuses[0]!.state.running);
    assert.ok(web.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'));
    const big = byName.get('big') as { status: { phase: string; reason: string } };
    assert.deepEqual([big.status.phase, big.status.reason], ['Failed', 'OutOfcpu']);
    assert.match(r.stderr, /1 of 4 pods failed:\npod\/big: rejected: OutOfcpu/);
    assert.match(r.stderr, /stopping 3 pods gracefully/);
  } finally {
    await tmp.remove();
  }
});

test('-o yaml prints the List in the API server field order, and the pods are gone afterwards', async () => {
  const tmp = await tempDir();
  try {
    const root = join(tmp.path, 'root');
    const r = await runCli(['run', '-f', fixture('two-running.yaml'), '--root-dir', root, '-o', 'yaml']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^kind: List\napiVersion: v1\nmetadata:\n  resourceVersion: ""\nitems:\n- kind: Pod\n  apiVersion: v1\n  metadata:\n/);
    const pids = await containerPids(root);
    await waitFor('container processes gone', () => [...pids.values()].every((p) => !isAlive(p)));
  } finally {
    await tmp.remove();
  }
});

test('--wait=running fails fast as every wait does: a lone crash-looping pod, and a pod whose command cannot start, with the same reason up -d gives', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  try {
    // A long --timeout: the answer comes from the pod, not from the clock (the deadline kills a run that waits it out).
    const crash = await runCli(['run', '-f', fixture('crash-only.yaml'), '--root-dir', root, '--wait=running', '--timeout=5m'], 90_000);
    assert.equal(crash.code, 1, crash.stdout + crash.stderr);
    assert.ok(tableRows(crash.stdout).has('lone-crasher'), crash.stdout);
    assert.match(
      crash.stdout,
      /1 of 1 pod failed:\npod\/lone-crasher: pod "lone-crasher_default\([0-9a-f]+\)" cannot become running: container app: CrashLoopBackOff: exited with code 2 \(Error\)/,
    );

    const start = await runCli(['run', '-f', fixture('start-error.yaml'), '--root-dir', root, '--wait=running', '--timeout=5m'], 90_000);
    assert.equal(start.code, 1, start.stdout + start.stderr);
    const runReason = /pod\/start-error: pod "start-error_default\([0-9a-f]+\)" cannot become running: (container main: [A-Za-z]+)/.exec(start.stdout);
    assert.ok(runReason, start.stdout);
    assert.match(start.stdout, /stat \/nonexistent\/command: no such file or directory/);

    // The same pod through the agent: the same engine, the same answer.
    const up = await runCli(['up', '-d', '-f', fixture('start-error.yaml'), '--root-dir', root, '--wait=running', '--timeout=5m'], 90_000);
    assert.equal(up.code, 1, up.stdout + up.stderr);
    const upReason = /pod\/start-error: cannot become running: (container main: [A-Za-z]+)/.exec(up.stderr);
    assert.ok(upReason, up.stderr);
    const reasons = new Set(['RunContainerError', 'CrashLoopBackOff', 'StartError']);
    for (const r of [runReason[1]!, upReason[1]!]) assert.ok(reasons.has(r.split(': ')[1]!), r);
  } finally {
    await runCli(['down', '--all', '--agent', '--root-dir', root, '--grace-period', '0']);
    await tmp.remove();
  }
});

test('the process runtime runs host binaries: no pull is ever reported, whatever the policy; one event says the images are not used', async () => {
  const tmp = await tempDir();
  try {
    const file = join(tmp.path, 'never.yaml');
    const container = (name: string, image: string, policy: string) =>
      `  - name: ${name}\n    image: ${image}\n    imagePullPolicy: ${policy}\n    command: ["sh", "-c", "echo ran"]\n`;
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: never}\nspec:\n  restartPolicy: Never\n  containers:\n` +
        `${container('a', 'busybox:1.36', 'Never')}${container('b', 'busybox:1.36', 'IfNotPresent')}${container('c', 'alpine', 'Always')}`,
    );
    // `up -o json` ends once all have completed, with the pod's events after it.
    const r = await runCli(['up', '-f', file, '--root-dir', join(tmp.path, 'root'), '-o', 'json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const items = (JSON.parse(r.stdout) as { items: Array<{ kind: string; reason?: string; message?: string; involvedObject?: { fieldPath?: string } }> })
      .items;
    const events = items.filter((i) => i.kind === 'Event');
    const images = events.filter((e) => ['Pulled', 'Pulling', 'ErrImageNeverPull', 'ImageNotUsed'].includes(e.reason ?? ''));
    assert.deepEqual(
      images.map((e) => `${e.reason}: ${e.message}`),
      [
        'ImageNotUsed: Images "busybox:1.36", "alpine" are not used by the process runtime: nothing is pulled, each container runs its command as a host process (--runtime=containerd runs images)',
      ],
    );
    assert.equal(images[0]!.involvedObject?.fieldPath, undefined, 'an event of the pod, not of one container');
    const pod = items.find((i) => i.kind === 'Pod') as unknown as { status: { containerStatuses: Array<{ name: string; imageID: string }> } };
    assert.deepEqual(
      pod.status.containerStatuses.map((c) => [c.name, c.imageID]),
      [
        ['a', 'process://busybox:1.36'],
        ['b', 'process://busybox:1.36'],
        ['c', 'process://alpine:latest'],
      ],
    );
  } finally {
    await tmp.remove();
  }
});
