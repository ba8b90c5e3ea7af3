// The one wait engine through the real executable: up -d --wait=ready and apply --wait of a crashing
// pod fail in seconds with the reason and the log tail (they used to wait out --timeout and say only
// `not ready after 60s`), and `podvisor wait` speaks kubectl's --for forms against a real agent.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixture, runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';

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

test('up -d --wait=ready of a crashing pod fails fast with the reason and the log tail', async () => {
  const started = Date.now();
  const r = await cli('up', '-d', '-f', fixture('crashloop.yaml'), '--wait=ready', '--timeout=60s');
  const took = Date.now() - started;
  assert.equal(r.code, 1, r.stderr);
  assert.ok(took < 30_000, `failed after ${took} ms, not after the 60s timeout`);
  assert.match(r.stderr, /pod\/crasher: cannot become ready: container app: CrashLoopBackOff: exited with code 2 \(Error\)/);
  assert.match(r.stderr, /\| boom/, 'the log tail');
  assert.doesNotMatch(r.stderr, /not ready after/);
});

test('wait: condition=Ready, jsonpath, a mode, a timeout that says what is missing, NotFound, a bad --for', async () => {
  const ready = await cli('wait', 'pod/steady', '--for=condition=Ready', '--timeout=60s');
  assert.equal(ready.code, 0, ready.stderr);
  assert.equal(ready.stdout, 'pod/steady condition met\n');
  const phase = await cli('wait', 'steady', '--for=jsonpath={.status.phase}=Running');
  assert.equal(phase.code, 0, phase.stderr);
  assert.equal(phase.stdout, 'pod/steady condition met\n');
  const running = await cli('wait', '-f', fixture('crashloop.yaml'), '--for=running', '--timeout=60s');
  assert.equal(running.code, 1, 'the crashing pod fails the wait at once');
  assert.match(running.stderr, /pod\/crasher: cannot become running: container app: CrashLoopBackOff/);
  const late = await cli('wait', 'pod/steady', '--for=completed', '--timeout=1s');
  assert.equal(late.code, 1);
  assert.match(late.stderr, /pod\/steady: timed out after 1s waiting to be completed: Running/);
  const missing = await cli('wait', 'pod/nope', '--for=ready');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /Error from server \(NotFound\): pods "nope" not found/);
  const bad = await cli('wait', 'pod/steady', '--for=green');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /error: unrecognized condition: "green"/);
});

test('apply --wait fails fast too; wait --for=delete returns once the pod is gone', async () => {
  const applied = await cli('apply', '-f', fixture('crashloop.yaml'), '--wait=auto');
  assert.equal(applied.code, 1);
  assert.match(applied.stdout, /pod\/crasher unchanged/);
  assert.match(applied.stderr, /pod\/crasher: cannot become running: container app: CrashLoopBackOff/);
  const waiting = startCli(['wait', '--root-dir', root, 'pod/steady', 'pod/crasher', '--for=delete', '--timeout=60s']);
  const deleted = await cli('down', '-f', fixture('crashloop.yaml'), '--grace-period', '0');
  assert.equal(deleted.code, 0, deleted.stderr);
  const { code } = await waiting.exited;
  assert.equal(code, 0, waiting.stderr());
  assert.match(waiting.stdout(), /pod\/steady condition met/);
  assert.match(waiting.stdout(), /pod\/crasher condition met/);
});
