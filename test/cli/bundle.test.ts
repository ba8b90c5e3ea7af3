// The bundled CLI the `podvisor` executable runs: after the build it is current, V8 accepts its code
// cache, it prints what the modules print, and the executable really starts it (watched through
// vm.Script from a preloaded script); a bundle older than the modules is not used.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import { runInProcess } from '../fixtures/cli/in-process.js';
import type * as Loader from '../../src/cli/bundle-loader.cjs';

const loader = createRequire(import.meta.url)('../../src/cli/bundle-loader.cjs') as typeof Loader;
const launcher = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));

test('after the build the bundle is current and V8 accepts its code cache', () => {
  assert.ok(loader.bundleIsCurrent(), 'dist/bundle/podvisor.cjs is missing or older than main.js: run npm run build');
  const script = loader.compileBundle();
  assert.equal(script.cachedDataRejected, false);
});

test('the bundled CLI validates the examples as the modules do', async () => {
  const bundled = loader.loadBundle();
  const args = ['validate', '-f', 'examples/', '-o', 'json'];
  const a = await runInProcess(bundled.main, args, root);
  const b = await runInProcess(main, args, root);
  assert.equal(a.code, 0);
  assert.equal(b.code, 0);
  assert.ok(a.stdout.includes('"kind": "Pod"'));
  assert.equal(a.stdout, b.stdout);
});

test('the executable compiles the bundle with its cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-bundle-'));
  try {
    // Reports every script compiled with a code cache, and whether V8 took it.
    const watch = join(dir, 'watch.cjs');
    writeFileSync(
      watch,
      "const vm = require('node:vm'); const Script = vm.Script;\n" +
        'vm.Script = class extends Script { constructor(src, opts) { super(src, opts);\n' +
        '  if (opts && opts.cachedData) process.stderr.write(`compiled ${opts.filename} rejected=${this.cachedDataRejected}\\n`); } };\n',
    );
    const run = spawnSync(process.execPath, ['--require', watch, launcher, 'validate', '-f', 'examples/web.yaml'], { cwd: root, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^pod\/web validated$/m);
    assert.match(run.stderr, /compiled .*dist\/bundle\/podvisor\.cjs rejected=false/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bundle older than the modules, or none, is not current', () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-bundle-'));
  try {
    const bundle = join(dir, 'podvisor.cjs');
    const mainJs = join(dir, 'main.js');
    writeFileSync(bundle, '');
    writeFileSync(mainJs, '');
    utimesSync(bundle, 1000, 1000);
    utimesSync(mainJs, 2000, 2000);
    assert.equal(loader.bundleIsCurrent(bundle, mainJs), false);
    utimesSync(bundle, 2000, 2000);
    assert.equal(loader.bundleIsCurrent(bundle, mainJs), true);
    assert.equal(loader.bundleIsCurrent(join(dir, 'none.cjs'), mainJs), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
