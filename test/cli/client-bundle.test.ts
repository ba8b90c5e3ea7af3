// The client bundle (dist/bundle/client.cjs): the executable runs `--version` and the commands that
// only talk to an agent from it and everything else from the full bundle; it names the same commands
// the full CLI has and prints what they print; and a client command loads none of the heavy modules
// (yaml, gRPC, prom-client, child_process, the agent's; exec not even TLS or zlib), watched from a
// preloaded script.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import { clientCommands, clientMain } from '../../src/cli/client-main.js';
import { findCommand } from '../../src/cli/commands.js';
import { objectPath } from '../../src/cli/object-paths.js';
import { objectKinds } from '../../src/config/object-kinds.js';
import { runInProcess } from '../fixtures/cli/in-process.js';
import type * as Loader from '../../src/cli/bundle-loader.cjs';

const loader = createRequire(import.meta.url)('../../src/cli/bundle-loader.cjs') as typeof Loader;
const launcher = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** A preload that reports, at exit, the bundles compiled, the packages required and Node's own modules loaded. */
const watchScript =
  "const vm = require('node:vm'); const Script = vm.Script; const seen = [];\n" +
  'vm.Script = class extends Script { constructor(src, opts) { super(src, opts); if (opts && opts.filename) seen.push(opts.filename); } };\n' +
  "process.on('exit', () => require('node:fs').writeSync(2, '\\nWATCH ' + JSON.stringify({ bundles: seen, files: Object.keys(require.cache), builtins: process.moduleLoadList }) + '\\n'));\n";

interface Watched {
  status: number | null;
  stdout: string;
  stderr: string;
  bundles: string[];
  files: string[];
  builtins: string[];
}

function runWatched(dir: string, args: string[]): Watched {
  const watch = join(dir, 'watch.cjs');
  writeFileSync(watch, watchScript);
  const run = spawnSync(process.execPath, ['--require', watch, launcher, ...args], { cwd: root, encoding: 'utf8' });
  const line = run.stderr.split('\n').find((l) => l.startsWith('WATCH '));
  assert.ok(line, `no report from the preloaded script: ${run.stderr}`);
  return {
    status: run.status,
    stdout: run.stdout,
    stderr: run.stderr.replace(/\n?WATCH .*\n/, ''),
    ...(JSON.parse(line.slice(6)) as Omit<Watched, 'status' | 'stdout' | 'stderr'>),
  };
}

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-client-bundle-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the launcher sends exactly the client commands to the client bundle, and each is a command of the full CLI', () => {
  const names = Object.keys(clientCommands).sort();
  assert.deepEqual([...loader.clientCommandNames].filter((n) => n !== '--version' && n !== 'version').sort(), names);
  for (const n of names) assert.ok(findCommand(n), `${n} is not a command of commands.ts`);
  assert.ok(
    loader.bundleIsCurrent(loader.clientBundlePath, join(fileURLToPath(new URL('../../src/cli/', import.meta.url)), 'client-main.js')),
    'run npm run build',
  );
  assert.equal(loader.compileBundle(loader.clientBundlePath).cachedDataRejected, false);
  assert.equal(loader.bundleFor(['get', 'pods']), loader.clientBundlePath);
  assert.equal(loader.bundleFor(['--version']), loader.clientBundlePath);
  assert.equal(loader.bundleFor(['validate', '-f', 'x']), loader.bundlePath);
  assert.equal(loader.bundleFor(['--help']), loader.bundlePath);
  assert.equal(loader.bundleFor([]), loader.bundlePath);
});

test('the client entry prints what the full CLI prints', async () => {
  for (const args of [['--version'], ['version'], ['get', '--help'], ['logs', '--help'], ['describe', '--help'], ['exec', '--help'], ['get'], ['logs']]) {
    const a = await runInProcess(clientMain, args, root);
    const b = await runInProcess(main, args, root);
    assert.deepEqual(a, b, args.join(' '));
  }
});

test('client commands run from the client bundle and load none of the heavy modules', () => {
  withDir((dir) => {
    const heavy = /node_modules\/(yaml|@grpc|prom-client|cron-parser|dns-packet|xmlbuilder2|ws)\//;
    const heavyBuiltins = [
      'NativeModule child_process',
      'NativeModule dgram',
      'NativeModule crypto',
      'NativeModule tls',
      'NativeModule zlib',
      'NativeModule http2',
    ];
    // No agent on the root dir: each command gets as far as its request, with its modules loaded.
    for (const args of [
      ['get', 'pods'],
      ['logs', 'web'],
      ['describe', 'pod', 'web'],
      ['top', 'pods'],
    ]) {
      const r = runWatched(dir, [...args, '--root-dir', join(dir, 'root')]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /^error: no podvisor agent runs for root dir/);
      assert.deepEqual(
        r.bundles.map((b) => b.split('/').pop()),
        ['client.cjs'],
        args.join(' '),
      );
      assert.deepEqual(
        r.files.filter((f) => heavy.test(f) || f.endsWith('.json')),
        [],
        `${args.join(' ')} required package files or JSON`,
      );
      assert.deepEqual(
        r.builtins.filter((m) => heavyBuiltins.includes(m)),
        [],
        `${args.join(' ')} loaded heavy built-ins`,
      );
    }
    // exec holds ws in the bundle, no package file; ws's TLS, HTTPS and zlib wait for a use exec never makes.
    const e = runWatched(dir, ['exec', 'web', '--root-dir', join(dir, 'root'), '--', 'true']);
    assert.equal(e.status, 1, e.stderr);
    assert.deepEqual(
      e.files.filter((f) => f.includes('node_modules')),
      [],
    );
    assert.deepEqual(
      e.builtins.filter((m) => ['NativeModule tls', 'NativeModule https', 'NativeModule zlib'].includes(m)),
      [],
      'exec loaded TLS or zlib',
    );
    const v = runWatched(dir, ['--version']);
    assert.equal(v.status, 0);
    assert.match(v.stdout, /^podvisor \d/);
    assert.deepEqual(
      v.builtins.filter((m) => ['NativeModule http', 'NativeModule _http_client', 'NativeModule fs/promises'].includes(m)),
      [],
      '--version loaded the HTTP client',
    );
    const full = runWatched(dir, ['validate', '-f', 'examples/web.yaml']);
    assert.equal(full.status, 0, full.stderr);
    assert.deepEqual(
      full.bundles.map((b) => b.split('/').pop()),
      ['podvisor.cjs'],
    );
  });
});

test('the API path of every kind a manifest may hold names its resource', () => {
  for (const [kind, rules] of Object.entries(objectKinds)) {
    // A cluster-scoped kind (Namespace) has no namespace in its path.
    const scope = rules.namespaced ? '/namespaces/ns' : '';
    assert.equal(
      objectPath(rules.apiVersions[0]!, kind, 'ns', 'x'),
      `${rules.apiVersions[0]!.includes('/') ? '/apis' : '/api'}/${rules.apiVersions[0]}${scope}/${rules.resource}/x`,
    );
  }
});
