// The exec prober through a runtime that really runs processes (exec-runtime.ts stands in for the
// process runtime): exit codes, output order and cap, timeouts, $(VAR) expansion, runtime errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '../../src/api/types.js';
import { doExecProbe, expandCommandOnlyStatic, runtimeContainerId } from '../../src/prober/exec.js';
import { execOnlyRuntime } from './exec-runtime.js';

const container: Container = {
  name: 'c',
  env: [
    { name: 'A', value: 'script' },
    { name: 'FROM', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ],
};

test('exit code 0 is success with the output; non-zero is failure with the output', async () => {
  const rt = execOnlyRuntime();
  assert.deepEqual(await doExecProbe(rt, 'process://abc', container, ['sh', '-c', 'echo healthy'], 1), { result: 'success', output: 'healthy\n' });
  assert.deepEqual(await doExecProbe(rt, 'process://abc', container, ['sh', '-c', 'cat /nonexistent/health'], 1), {
    result: 'failure',
    output: 'cat: /nonexistent/health: No such file or directory\n',
  });
  assert.equal(rt.calls[0]!.containerId, 'abc', 'the runtime-local ID');
  assert.equal(rt.calls[0]!.timeoutSeconds, 1);
});

test('stdout comes before stderr, not interleaved', async () => {
  const rt = execOnlyRuntime();
  const out = await doExecProbe(rt, 'process://abc', container, ['sh', '-c', 'echo err1 >&2; echo out1; echo err2 >&2; echo out2; exit 3'], 1);
  assert.deepEqual(out, { result: 'failure', output: 'out1\nout2\nerr1\nerr2\n' });
});

test('output is capped at 10 KiB', async () => {
  const rt = execOnlyRuntime();
  const out = await doExecProbe(rt, 'process://abc', container, ['sh', '-c', 'head -c 30000 /dev/zero | tr "\\0" x'], 2);
  assert.equal(out.result, 'success');
  assert.equal(out.output, 'x'.repeat(10240));
});

test('a timeout is a failure naming the command', async () => {
  const rt = execOnlyRuntime();
  const out = await doExecProbe(rt, 'process://abc', container, ['sh', '-c', 'sleep 30'], 1);
  assert.deepEqual(out, { result: 'failure', output: 'command "sh -c sleep 30" timed out' });
});

test('a runtime error is unknown with the error', async () => {
  const rt = execOnlyRuntime(new Set());
  const out = await doExecProbe(rt, 'process://gone', container, ['true'], 1);
  assert.equal(out.result, 'unknown');
  assert.equal(out.error?.message, 'container "gone" not found');
});

test('$(VAR) expands only against literal env values', async () => {
  const cases: [string[], string[]][] = [
    [
      ['some', '$(A)', '$(B)'],
      ['some', 'script', '$(B)'],
    ],
    [['x$(A)y'], ['xscripty']],
    [['$(FROM)'], ['$(FROM)']], // valueFrom: not expanded
    [['$$(A)'], ['$(A)']], // escaped
    [['$(A'], ['$(A']], // unterminated
    [
      ['$x', 'a$', '$'],
      ['$x', 'a$', '$'],
    ],
  ];
  for (const [cmd, expected] of cases) assert.deepEqual(expandCommandOnlyStatic(cmd, container.env), expected, cmd.join(' '));
  const rt = execOnlyRuntime();
  const out = await doExecProbe(rt, 'process://abc', container, ['echo', 'some', '$(A)', '$(B)'], 1);
  assert.deepEqual(out, { result: 'success', output: 'some script $(B)\n' });
});

test('runtimeContainerId strips the runtime scheme', () => {
  assert.equal(runtimeContainerId('process://abc'), 'abc');
  assert.equal(runtimeContainerId('containerd://0123'), '0123');
  assert.equal(runtimeContainerId('bare'), 'bare');
});
