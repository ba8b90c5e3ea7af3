// The flag plumbing of `run` and `up`: Go duration values, node allocatable quantities, the hidden
// --retry-delay, and the help text (which must not show the hidden flag).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { availableParallelism, totalmem } from 'node:os';
import { parseArgs, UsageError } from '../../src/cli/args.js';
import {
  agentFlagSpecs,
  agentSettings,
  durationFlag,
  maxRestartPeriodSeconds,
  nodeAllocatable,
  parseGoDuration,
  takeHiddenFlag,
} from '../../src/cli/agent-flags.js';
import { runCommand } from '../../src/cli/run.js';
import { upCommand } from '../../src/cli/up.js';

test('DURATION values read as Go time.ParseDuration', () => {
  const ok: [string, number][] = [
    ['0', 0],
    ['30s', 30_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s', 3_723_000],
    ['1.5h', 5_400_000],
    ['.5s', 500],
    ['100ms', 100],
    ['250us', 0.25],
    ['+5s', 5000],
    ['-1s', -1000],
  ];
  for (const [s, ms] of ok) assert.equal(parseGoDuration(s), ms, s);
  const bad: [string, RegExp][] = [
    ['', /time: invalid duration ""/],
    ['abc', /time: invalid duration "abc"/],
    ['10', /time: missing unit in duration "10"/],
    ['5x', /time: unknown unit "x" in duration "5x"/],
    ['.s', /time: invalid duration ".s"/],
  ];
  for (const [s, re] of bad) assert.throws(() => parseGoDuration(s), re, s);
});

test('flags become checked settings; bad values are usage errors', () => {
  const parsed = (argv: string[]) => parseArgs(argv, [...agentFlagSpecs, { name: 'timeout', type: 'string', usage: '' }]);
  assert.deepEqual(nodeAllocatable(parsed(['--node-cpu=1500m', '--node-memory', '2Gi', '--max-pods=500'])), {
    cpuMilli: 1500,
    memoryBytes: 2 * 1024 ** 3,
    pods: 500,
  });
  assert.deepEqual(nodeAllocatable(parsed([])), { cpuMilli: availableParallelism() * 1000, memoryBytes: totalmem(), pods: 110 });
  assert.throws(() => nodeAllocatable(parsed(['--max-pods=0'])), /invalid argument "0" for "--max-pods" flag/);
  assert.throws(
    () => nodeAllocatable(parsed(['--node-cpu=many'])),
    (e: Error) => e instanceof UsageError && /invalid argument "many" for "--node-cpu" flag/.test(e.message),
  );
  assert.throws(() => nodeAllocatable(parsed(['--node-memory=0'])), UsageError);
  assert.equal(durationFlag(parsed(['--timeout=1m30s']), 'timeout'), 90_000);
  assert.equal(durationFlag(parsed([]), 'timeout'), undefined);
  assert.throws(() => durationFlag(parsed(['--timeout=-5s']), 'timeout'), /must not be negative/);
  assert.equal(maxRestartPeriodSeconds(parsed(['--max-container-restart-period=20s'])), 20);
  assert.throws(() => maxRestartPeriodSeconds(parsed(['--max-container-restart-period=500ms'])), /between 1s and 300s/);
  assert.throws(() => maxRestartPeriodSeconds(parsed(['--max-container-restart-period=6m'])), /between 1s and 300s/);
});

test("--container-runtime-endpoint: unix sockets only; the root dir's runtime.sock by default", () => {
  const io = { env: {}, cwd: '/work' };
  const settings = (argv: string[]) => agentSettings(parseArgs(argv, agentFlagSpecs), io);
  assert.equal(settings(['--root-dir', 'state']).runtimeEndpoint, 'unix:///work/state/runtime.sock');
  assert.equal(settings(['--container-runtime-endpoint', 'unix:///run/containerd/containerd.sock']).runtimeEndpoint, 'unix:///run/containerd/containerd.sock');
  assert.throws(
    () => settings(['--container-runtime-endpoint', 'tcp://127.0.0.1:1234']),
    (e: Error) => e instanceof UsageError && /invalid argument "tcp:\/\/127.0.0.1:1234" for "--container-runtime-endpoint" flag: .*only unix/.test(e.message),
  );
  assert.throws(() => settings(['--container-runtime-endpoint', 'unix://relative.sock']), /must be absolute/);
});

test('the hidden --retry-delay is taken out before parsing and kept out of --help', async () => {
  assert.deepEqual(takeHiddenFlag(['-f', 'a.yaml', '--retry-delay=100ms', '--wait=ready'], 'retry-delay'), {
    argv: ['-f', 'a.yaml', '--wait=ready'],
    value: '100ms',
  });
  assert.deepEqual(takeHiddenFlag(['--retry-delay', '5ms', '-f', 'x'], 'retry-delay'), { argv: ['-f', 'x'], value: '5ms' });
  assert.deepEqual(takeHiddenFlag(['-f', 'x', '--', '--retry-delay=1s'], 'retry-delay'), { argv: ['-f', 'x', '--', '--retry-delay=1s'] });

  const io = () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (b) => (out += b));
    stderr.on('data', (b) => (err += b));
    return { io: { stdin: new PassThrough(), stdout, stderr, env: process.env, cwd: process.cwd() }, out: () => out, err: () => err };
  };
  for (const cmd of [runCommand, upCommand]) {
    const h = io();
    assert.equal(await cmd.run(['--help'], h.io), 0);
    assert.doesNotMatch(h.out(), /retry-delay/);
    for (const flag of [
      '--filename',
      '--runtime',
      '--root-dir',
      '--node-cpu',
      '--node-memory',
      '--max-container-restart-period',
      '--max-pods',
      '--validate',
      '--output',
    ]) {
      assert.match(h.out(), new RegExp(flag), `${cmd.name} --help lists ${flag}`);
    }
  }
  const bad = io();
  assert.equal(await runCommand.run(['-f', 'x.yaml', '--retry-delay=soon'], bad.io), 2);
  assert.match(bad.err(), /invalid argument "soon" for "--retry-delay" flag/);
  const none = io();
  assert.equal(await runCommand.run([], none.io), 2);
  assert.match(none.err(), /must specify at least one manifest with -f\/--filename/);
  // up -d names the same flag (podvisor has no -k).
  const detached = io();
  assert.equal(await upCommand.run(['-d'], detached.io), 2);
  assert.match(detached.err(), /^error: must specify at least one manifest with -f\/--filename/);
  assert.doesNotMatch(detached.err(), /-k/);
});
