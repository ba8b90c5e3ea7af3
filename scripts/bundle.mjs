// Builds dist/bundle/, what the `podvisor` executable (dist/src/cli/launch.cjs) runs: the CLI as one
// CommonJS file made by esbuild from tsc's output (packages stay in node_modules; commands stay
// lazy, each module initialised on first use), the data files its modules read beside it, and the
// V8 code cache the launcher compiles it with, made by a run of `podvisor validate -f examples/`.
// Run after tsc: `npm run build` does both.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/bundle');
const bundle = join(out, 'podvisor.cjs');
const launcher = join(root, 'dist/src/cli/launch.cjs');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [join(root, 'dist/src/cli/main.js')],
  outfile: bundle,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  legalComments: 'none',
  charset: 'ascii',
  // Smaller to read and all ASCII; identifiers keep their names, for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  // Each module's import.meta.url becomes the bundle's own URL: the files modules read beside
  // themselves are copied beside it. The processes podvisor starts of itself start the launcher.
  define: { 'import.meta.url': '__podvisorModuleURL', PODVISOR_LAUNCHER: '__podvisorLauncher' },
  banner: {
    js:
      "const __podvisorModuleURL = require('node:url').pathToFileURL(__filename).href;\n" +
      "const __podvisorLauncher = require('node:path').join(__dirname, '../src/cli/launch.cjs');",
  },
});

// The file is the CommonJS wrapper function itself, so the launcher compiles it as read; it is
// ASCII (esbuild escapes the rest), so the launcher reads it as latin1 without decoding UTF-8.
const body = readFileSync(bundle, 'utf8').replace(/^#!.*\n/, '');
if (/[^\x00-\x7f]/.test(body)) throw new Error('bundle: the output holds non-ASCII characters');
writeFileSync(bundle, `(function (exports, require, module, __filename, __dirname) {${body}\n})`);
for (const file of ['src/api/schema.generated.json', 'src/api/field-order.generated.json']) {
  writeFileSync(join(out, file.split('/').pop()), JSON.stringify(JSON.parse(readFileSync(join(root, file), 'utf8'))));
}
copyFileSync(join(root, 'src/runtime/cri/api.proto'), join(out, 'api.proto'));

// bin/podvisor, the clone's own executable, is a link to the launcher: it must be executable.
chmodSync(launcher, 0o755);

const cache = `${bundle}.cache`;
const run = spawnSync(process.execPath, [launcher, 'validate', '-f', 'examples/'], {
  cwd: root,
  env: { ...process.env, PODVISOR_CODE_CACHE_OUT: cache },
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (run.status !== 0 || !existsSync(cache)) {
  console.error(`bundle: the run that makes the code cache failed (status ${run.status})`);
  process.exit(1);
}
