// A root dir too long for the unix sockets placed in it (a socket path holds at most 107 bytes): the
// agent and the runtime service refuse it at start, naming the socket and the limit, instead of
// starting with an exec/attach socket that cannot be bound; at the longest root dir allowed, the
// agent starts and exec works through the streaming socket.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootDirSocketProblem, UNIX_SOCKET_PATH_MAX } from '../../src/runtime/process-runtime.js';
import { runCli, startCli, stopRuntimeServices } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { call, shellPod } from '../agent/helpers.js';

/** A path under base of exactly `bytes` bytes. */
function pathOfLength(base: string, bytes: number): string {
  const pad = bytes - Buffer.byteLength(base) - 1;
  assert.ok(pad > 0, `${base} leaves no room for ${bytes} bytes`);
  return join(base, 'r'.repeat(pad));
}

// The longest socket is <root>/runtime/streaming.sock: 23 bytes after the root dir.
const LONGEST_ROOT = UNIX_SOCKET_PATH_MAX - '/runtime/streaming.sock'.length;

test('the socket limit: a root dir of 84 bytes fits, 85 does not, and the error names the socket and the limit', () => {
  assert.equal(LONGEST_ROOT, 84);
  assert.equal(rootDirSocketProblem(pathOfLength('/tmp', LONGEST_ROOT)), undefined);
  const long = pathOfLength('/tmp', LONGEST_ROOT + 1);
  assert.equal(
    rootDirSocketProblem(long),
    `the root dir is too long for its unix sockets: ${long}/runtime/streaming.sock would be 108 bytes, and a unix socket path holds at most 107; use a root dir of at most 84 bytes`,
  );
  // Bytes, not characters.
  assert.notEqual(rootDirSocketProblem(join('/tmp', 'é'.repeat(41))), undefined);
});

test('agent, up and runtime serve refuse a root dir too long for their sockets, in one line, exit 2, creating nothing', async () => {
  const base = mkdtempSync(join(tmpdir(), 'pv-'));
  try {
    const long = pathOfLength(base, LONGEST_ROOT + 1);
    for (const args of [
      ['agent', '--root-dir', long],
      ['up', '-f', '-', '--root-dir', long],
      ['runtime', 'serve', '--root-dir', long],
    ]) {
      const r = await runCli(args, 60_000);
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      assert.match(
        r.stderr.split('\n')[0]!,
        /^error: invalid argument ".*" for "--root-dir" flag: the root dir is too long for its unix sockets: .*\/runtime\/streaming\.sock would be 108 bytes, and a unix socket path holds at most 107; use a root dir of at most 84 bytes$/,
        args[0],
      );
      assert.equal(existsSync(long), false, `${args[0]} created nothing`);
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('at the longest root dir allowed the agent starts and exec works through its streaming socket', async () => {
  const base = mkdtempSync(join(tmpdir(), 'pv-'));
  const root = pathOfLength(base, LONGEST_ROOT);
  const agent = startCli(['agent', '--root-dir', root]);
  try {
    await agent.waitFor('stderr', /podvisor agent started/, 60_000);
    const created = await call(join(root, 'podvisor.sock'), 'POST', '/api/v1/namespaces/default/pods', shellPod('web', 'exec sleep 300'));
    assert.equal(created.status, 201, created.body);
    await waitFor(
      'the pod running',
      async () => (await call(join(root, 'podvisor.sock'), 'GET', '/api/v1/namespaces/default/pods/web')).json().status?.phase === 'Running',
      60_000,
    );
    const r = await runCli(['exec', 'web', '--root-dir', root, '--', 'sh', '-c', 'echo reached'], 60_000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'reached\n');
  } finally {
    agent.child.kill('SIGKILL');
    await agent.exited;
    await stopRuntimeServices(root);
    rmSync(base, { recursive: true, force: true });
  }
});
