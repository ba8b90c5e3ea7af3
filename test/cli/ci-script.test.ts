// The README's five-line CI script, run as written: services up and ready, a test pod against them
// (run through the agent up -d started) whose exit code is the script's, the failed container's reason and logs on failure, and everything
// (pods, agent, runtime service) torn down by its trap either way.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mainJs, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { lockOwner } from '../../src/runtime/root-lock.js';

const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
const script = /<!-- ci-script -->\n+```sh\n([\s\S]*?)```/.exec(readme)![1]!;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const services = (port: number) => `apiVersion: v1
kind: Pod
metadata: {name: api}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: api
    image: node:20-alpine
    command: ["${process.execPath}", "-e", "require('node:http').createServer((q, s) => s.end('pong')).listen(${port})"]
    readinessProbe:
      httpGet: {path: /, port: ${port}}
      periodSeconds: 1
`;

const testPod = (port: number, exitCode: number) => `apiVersion: v1
kind: Pod
metadata: {name: test}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: node:20-alpine
    command: ["${process.execPath}", "-e", "fetch('http://127.0.0.1:${port}/').then((r) => r.text()).then((t) => { console.log('got ' + t); process.exit(${exitCode}); })"]
`;

async function runScript(dir: string, root: string): Promise<{ code: number | null; out: string }> {
  // `podvisor` on PATH, with the test's root dir unless the script names one.
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, 'podvisor'),
    `#!/bin/sh\ncase " $* " in *" --root-dir "*) exec "${process.execPath}" "${mainJs}" "$@";; esac\ncmd=$1; shift\nexec "${process.execPath}" "${mainJs}" "$cmd" --root-dir "${root}" "$@"\n`,
  );
  chmodSync(join(bin, 'podvisor'), 0o755);
  writeFileSync(join(dir, 'ci.sh'), script);
  const child = spawn('sh', ['-e', join(dir, 'ci.sh')], {
    cwd: dir,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((r) => child.once('close', r));
  return { code, out };
}

test('the README CI script has five lines; it passes, then returns a failing test pod exit code with its logs, tearing down both times', async () => {
  assert.equal(script.trimEnd().split('\n').length, 5, 'five lines');
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  try {
    const port = await freePort();
    mkdirSync(join(tmp.path, 'ci'));
    writeFileSync(join(tmp.path, 'ci', 'services.yaml'), services(port));

    writeFileSync(join(tmp.path, 'ci', 'test.yaml'), testPod(port, 0));
    const passed = await runScript(tmp.path, root);
    assert.equal(passed.code, 0, passed.out);
    assert.match(passed.out, /test\/main \| got pong/);
    // run finds the agent up -d started on the same root dir and runs the test pod through it.
    assert.match(passed.out, /^pod\/test created$/m);
    assert.match(passed.out, /tests passed/);
    assert.match(passed.out, /stopped the podvisor agent for /);
    assert.equal(lockOwner(root), undefined, 'the agent is gone');

    writeFileSync(join(tmp.path, 'ci', 'test.yaml'), testPod(port, 3));
    const failed = await runScript(tmp.path, root);
    assert.equal(failed.code, 3, failed.out);
    assert.match(failed.out, /pod\/test: .*\n\s+container main: exit code 3 \(Error\)\n[\s\S]*\| got pong/);
    assert.doesNotMatch(failed.out, /tests passed/);
    assert.match(failed.out, /stopped the podvisor agent for /);
    assert.equal(lockOwner(root), undefined);
  } finally {
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
