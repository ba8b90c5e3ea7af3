// kubectl's habits through the real executable, compared with real kubectl on the same agent:
// get -o jsonpath=… and -o custom-columns=…, -L and --show-labels, a clear word on go-template, and
// exec of a command that cannot run exiting 127 (not found) or 126 (not executable) as the shell does.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';

const exec = promisify(execFile);
let dir: { path: string; remove(): Promise<void> };
let root: string;
const cli = (cmd: string, ...args: string[]) => runCli([cmd, '--root-dir', root, ...args]);
const kubectl = (...args: string[]) => exec(process.env.KUBECTL ?? 'kubectl', ['--kubeconfig', join(root, 'kubeconfig'), ...args]);

before(async () => {
  dir = await tempDir();
  root = join(dir.path, 'root');
  const file = join(dir.path, 'pods.yaml');
  writeFileSync(
    file,
    [
      manifestYaml(pod('web', [shell('main', 'sleep 300')], { terminationGracePeriodSeconds: 1 }, { labels: { app: 'web', tier: 'front' } })),
      manifestYaml(pod('db', [shell('main', 'sleep 300')], { terminationGracePeriodSeconds: 1 }, { labels: { app: 'db' } })),
    ].join('---\n'),
  );
  const up = await runCli(['up', '-d', '-f', file, '--root-dir', root, '--port', '0', '--wait=running']);
  assert.equal(up.code, 0, up.stderr);
});

after(async () => {
  await cli('down', '--all', '--agent', '--grace-period', '0');
  await stopRuntimeServices(dir.path);
  await dir.remove();
});

test('get -o jsonpath and -o custom-columns print what kubectl prints', async () => {
  for (const output of [
    'jsonpath={.items[*].metadata.name}',
    'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}',
    'jsonpath={.items[?(@.metadata.labels.app=="web")].metadata.labels.tier}',
    'custom-columns=NAME:.metadata.name,APP:.metadata.labels.app,TIER:.metadata.labels.tier',
  ]) {
    const ours = await cli('get', 'pods', '-o', output);
    assert.equal(ours.code, 0, ours.stderr);
    const theirs = await kubectl('get', 'pods', '-o', output);
    assert.equal(ours.stdout, theirs.stdout, output);
  }
  const one = await cli('get', 'pod', 'web', '-o', 'jsonpath={.metadata.labels.app}');
  assert.equal(one.stdout, 'web');
  assert.equal(one.stdout, (await kubectl('get', 'pod', 'web', '-o', 'jsonpath={.metadata.labels.app}')).stdout);
  const gt = await cli('get', 'pods', '-o', 'go-template={{.kind}}');
  assert.equal(gt.code, 2);
  assert.match(gt.stderr, /go-template is kubectl's own: run kubectl against the agent/);
});

test('get -L and --show-labels: the label columns kubectl adds', async () => {
  const ours = await cli('get', 'pods', '-L', 'tier', '--show-labels');
  assert.equal(ours.code, 0, ours.stderr);
  assert.match(ours.stdout, /^NAME +READY +STATUS +RESTARTS +AGE +TIER +LABELS$/m);
  assert.match(ours.stdout, /^web +1\/1 +Running +0 +\S+ +front +app=web,tier=front$/m);
  const theirs = await kubectl('get', 'pods', '-L', 'tier', '--show-labels');
  assert.deepEqual(ours.stdout.split('\n')[0]!.split(/\s+/), theirs.stdout.split('\n')[0]!.split(/\s+/));
});

test('one MissingClusterDNS note per agent on the process runtime, not one per pod', async () => {
  const events = await cli('get', 'events');
  assert.equal(events.code, 0, events.stderr);
  assert.equal(events.stdout.match(/MissingClusterDNS/g)?.length ?? 0, 1, events.stdout);
});

test('exec of a command that cannot run exits 127 (not found) or 126 (not executable)', async () => {
  const missing = await cli('exec', 'web', '--', 'no-such-binary');
  assert.equal(missing.code, 127, missing.stderr);
  assert.match(missing.stderr, /executable file not found[\s\S]*command terminated with exit code 127/);
  const notExec = await cli('exec', 'web', '--', '/etc/passwd');
  assert.equal(notExec.code, 126, notExec.stderr);
  const exited = await cli('exec', 'web', '--', 'sh', '-c', 'exit 3');
  assert.equal(exited.code, 3);
});
