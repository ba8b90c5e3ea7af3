// `podvisor probes`, describe's Last readiness line and the probe history route, against a real
// `podvisor agent` process and a pod whose readiness probe (a real exec probe) fails, passes, fails
// once and recovers as the test creates and removes a file; and `podvisor run --junit` of a pod that
// is never Ready, its summary quoting the probe output and log tail, its JUnit file parsed back.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { convert } from 'xmlbuilder2';
import { runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { call } from '../agent/helpers.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';
import { waitFor } from '../fixtures/wait.js';

interface Item {
  container: string;
  probe: string;
  time: string;
  result: string;
  latencyMs: number;
  output: string;
  streak: number;
  threshold: number;
  effect: string;
}

let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess;
const cli = (cmd: string, ...args: string[]) => runCli([cmd, '--root-dir', root, ...args]);

before(async () => {
  dir = await tempDir();
  root = join(dir.path, 'root');
  agent = startCli(['agent', '--root-dir', root]);
  await agent.waitFor('stderr', /podvisor agent started/);
});

after(async () => {
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
  await dir.remove();
});

async function items(name: string): Promise<Item[]> {
  const r = await cli('probes', name, '-o', 'json');
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { kind: string; items: Item[] };
  assert.equal(doc.kind, 'ProbeHistory');
  return doc.items;
}

test('probes: a readiness probe failing, Ready, failing below its threshold, recovered; describe reads it as recovered', async () => {
  const flag = join(dir.path, 'ready');
  const probe = {
    exec: { command: ['/bin/sh', '-c', `test -f ${flag} && echo fine || { echo backend down; exit 1; }`] },
    periodSeconds: 1,
    failureThreshold: 3,
  };
  const file = join(dir.path, 'web.yaml');
  writeFileSync(file, manifestYaml(pod('web', [shell('app', 'exec sleep 300', { readinessProbe: probe })], { terminationGracePeriodSeconds: 1 })));
  const applied = await cli('apply', '-f', file);
  assert.equal(applied.code, 0, applied.stderr);

  await waitFor('a failed readiness result', async () => (await items('web')).some((e) => e.result === 'Failure'), 60_000);
  writeFileSync(flag, '');
  await waitFor('readiness Ready', async () => (await items('web')).some((e) => e.effect === 'Ready'), 30_000);
  const all0 = await items('web');
  rmSync(flag);
  await waitFor(
    'a failure below the threshold after Ready',
    async () => (await items('web')).some((e) => e.result === 'Failure' && all0.length > 0 && e.time > all0.at(-1)!.time),
    30_000,
  );
  // While it fails, probes says where it stands (on a loaded machine the threshold may be reached
  // before the command reads).
  const r = await cli('probes', 'web', '--probe', 'readiness');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^TIME +CONTAINER +PROBE +RESULT +LATENCY +STREAK +EFFECT +OUTPUT\n/);
  assert.match(r.stdout, /app +readiness +Failure +\d+ms +\d\/3 +- +backend down\n/);
  assert.match(r.stdout, /app +readiness +Success +\d+ms +1\/1 +Ready +fine\n/);
  assert.match(
    r.stdout,
    /app readiness (failing [12]\/3 since \d+s: still Ready, NotReady (at the next failure|after 2 more failures)|failing \d+\/3 since \d+s: NotReady)\n/,
  );
  writeFileSync(flag, '');
  await waitFor('readiness passing again', async () => {
    const all = await items('web');
    const last = all.at(-1);
    return last && last.result === 'Success' && all.some((e) => e.result === 'Failure' && e.output === 'backend down\n');
  });
  const all = await items('web');
  for (const e of all) {
    assert.deepEqual(Object.keys(e), ['container', 'probe', 'time', 'result', 'latencyMs', 'output', 'streak', 'threshold', 'effect']);
  }
  const d = await cli('describe', 'pod', 'web');
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /\n    Readiness: +exec \[.*\n    Last readiness: +Success \d+s ago \(streak \d+\)\n/);

  // The route itself: the document, and 404 for a pod the node does not run.
  const sock = join(root, 'podvisor.sock');
  const doc = await call(sock, 'GET', '/podvisor/v1/namespaces/default/pods/web/probes');
  assert.equal(doc.status, 200);
  assert.equal((doc.json() as { kind: string }).kind, 'ProbeHistory');
  const missing = await call(sock, 'GET', '/podvisor/v1/namespaces/default/pods/nosuch/probes');
  assert.equal(missing.status, 404);
  const nf = await cli('probes', 'nosuch');
  assert.equal(nf.code, 1);
  assert.equal(nf.stderr, 'Error from server (NotFound): pods "nosuch" not found\n');

  // -w: the kept results, then new ones, one JSON line each.
  const w = startCli(['probes', 'web', '--root-dir', root, '-w', '-o', 'json']);
  const before = all.length;
  await waitFor('new results on the watch', () => w.stdout().split('\n').filter(Boolean).length > before + 1, 30_000);
  w.child.kill('SIGINT');
  await w.exited;
  const lines = w
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Item);
  assert.ok(lines.every((l) => l.probe === 'readiness' && l.container === 'app'));
  const tw = startCli(['probes', 'web', '--root-dir', root, '-w']);
  await tw.waitFor('stdout', /readiness +Success/, 30_000);
  tw.child.kill('SIGINT');
  await tw.exited;
  assert.match(tw.stdout(), /^TIME +CONTAINER +PROBE/);

  const del = await cli('delete', 'pod', 'web');
  assert.equal(del.code, 0, del.stderr);
});

test('run --junit: a pod never Ready fails with its probe output and log tail, in the summary and the JUnit report', async () => {
  const file = join(dir.path, 'never.yaml');
  const script = 'for i in 1 2 3; do echo starting step $i; done; exec sleep 300';
  const probe = { exec: { command: ['/bin/sh', '-c', 'echo HTTP probe failed with statuscode: 503; exit 1'] }, periodSeconds: 1 };
  writeFileSync(file, manifestYaml(pod('never', [shell('app', script, { readinessProbe: probe })], { terminationGracePeriodSeconds: 1 })));
  const report = join(dir.path, 'report.xml');
  const r = await runCli(['run', '-f', file, '--root-dir', join(dir.path, 'run-root'), '--wait=ready', '--timeout=6s', '--junit', report]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stdout,
    /pod\/never: .*\n  container app: running, not ready\n    last \d probe results?:\n(    \| \S+ readiness Failure \d\/3.*: HTTP probe failed with statuscode: 503\n)+    last 3 log lines:\n    \| starting step 1\n/,
  );
  const xml = readFileSync(report, 'utf8');
  const parsed = convert(xml, { format: 'object' }) as unknown as {
    testsuites: {
      '@tests': string;
      '@failures': string;
      testsuite: { testcase: { '@name': string; '@classname': string; failure: { '@message': string; '#': string }; 'system-out': string } };
    };
  };
  assert.equal(parsed.testsuites['@tests'], '1');
  assert.equal(parsed.testsuites['@failures'], '1');
  const tc = parsed.testsuites.testsuite.testcase;
  // The object form keeps the text's character references as written.
  const text = (s: string) =>
    s
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&');
  assert.equal(tc['@name'], 'default/never');
  assert.equal(tc['@classname'], 'Pod');
  assert.match(text(tc.failure['#']), /HTTP probe failed with statuscode: 503/);
  assert.match(text(tc.failure['#']), /container app: running, not ready/);
  assert.match(text(tc['system-out']), /==> app <==\nstarting step 1\nstarting step 2\nstarting step 3/);
});
