// Edits re-apply: `up -d` of a changed manifest replaces the pods whose spec changed (gracefully,
// `pod/web replaced`), leaves the others, and starts new ones, as compose recreates changed
// services; `apply` keeps the API's rule, says to use `up -d` or `--force`, and `apply --force` replaces.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';

const podYaml = (name: string, script: string) => manifestYaml(pod(name, [shell('main', script)], { terminationGracePeriodSeconds: 1 }));

test('up -d replaces changed pods and keeps the rest; apply refuses with a hint; apply --force replaces', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'app.yaml');
  const cli = (...args: string[]) => runCli([...args, '--root-dir', root]);
  try {
    writeFileSync(file, [podYaml('web', 'echo v1; sleep 300'), podYaml('db', 'sleep 300')].join('---\n'));
    const first = await cli('up', '-d', '-f', file);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'pod/web created\npod/db created\n');

    writeFileSync(file, [podYaml('web', 'echo v2; sleep 300'), podYaml('db', 'sleep 300'), podYaml('cache', 'sleep 300')].join('---\n'));
    const edited = await cli('up', '-d', '-f', file);
    assert.equal(edited.code, 0, edited.stderr);
    assert.equal(edited.stdout, 'pod/web replaced\npod/db unchanged\npod/cache created\n');
    const logs = await cli('logs', 'web');
    assert.equal(logs.stdout, 'v2\n', 'the replaced pod runs the new spec');

    writeFileSync(file, podYaml('web', 'echo v3; sleep 300'));
    const refused = await cli('apply', '-f', file);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /pod updates may not change fields/);
    assert.match(refused.stderr, /hint: .*"podvisor up -d" replaces pods whose spec changed, as does "podvisor apply --force"/);
    const forced = await cli('apply', '-f', file, '--force', '--wait=running');
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout, 'pod/web replaced\n');
    assert.equal((await cli('logs', 'web')).stdout, 'v3\n');
  } finally {
    await cli('down', '--all', '--agent', '--grace-period', '0');
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});

test('up -d creates the namespaces its manifests name; apply answers NotFound for a missing one, as kubectl apply', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const file = join(tmp.path, 'app.yaml');
  const cli = (...args: string[]) => runCli([...args, '--root-dir', root]);
  try {
    writeFileSync(file, manifestYaml(pod('web', [shell('main', 'sleep 300')], { terminationGracePeriodSeconds: 1 }, { namespace: 'ci' })));
    const up = await cli('up', '-d', '-f', file);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(up.stdout, 'namespace/ci created\npod/web created\n');
    const again = await cli('up', '-d', '-f', file);
    assert.equal(again.stdout, 'pod/web unchanged\n', 'an existing namespace is left as it is');

    writeFileSync(file, manifestYaml(pod('other', [shell('main', 'sleep 300')], {}, { namespace: 'missing' })));
    const refused = await cli('apply', '-f', file);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /namespaces "missing" not found/);
  } finally {
    await cli('down', '--all', '--agent', '--grace-period', '0');
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
