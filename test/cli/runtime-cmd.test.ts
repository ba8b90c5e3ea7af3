// `podvisor runtime serve`: usage errors exit 2 before anything starts; help names the subcommand.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { runtimeCommand } from '../../src/cli/runtime.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await runtimeCommand.run(argv, { stdin: new PassThrough(), stdout, stderr, env: {}, cwd: '/' });
  return { code, out, err };
}

test('runtime: usage errors exit 2, help shows serve and its flags', async () => {
  assert.deepEqual(await run([]), { code: 2, out: '', err: "error: a subcommand is required: serve\nSee 'podvisor runtime --help' for usage.\n" });
  assert.equal((await run(['start'])).err.split('\n')[0], 'error: unknown subcommand "start" (supported: serve)');
  const bad = await run(['serve', '--listen', 'tcp://0.0.0.0:1']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: invalid argument "tcp:\/\/0.0.0.0:1" for "--listen" flag: .*only unix/);
  const help = await run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.out, /podvisor runtime serve \[--root-dir DIR\] \[--listen unix:\/\/\/PATH\]/);
  assert.match(help.out, /--listen ENDPOINT/);
});
