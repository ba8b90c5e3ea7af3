// Builds dist/bundle/, what the `podvisor` executable (dist/src/cli/launch.cjs) runs: the CLI as one
// CommonJS file made by esbuild from tsc's output (packages stay in node_modules; commands stay
// lazy, each module initialised on first use), a smaller one of the client commands alone
// (client-main.ts: --version, get, logs, describe, exec...), the data files their modules read beside
// them, and the V8 code cache the launcher compiles each with, made by a run of the executable.
// Run after tsc: `npm run build` does both.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/bundle');
const fullBundle = join(out, 'podvisor.cjs');
const clientBundle = join(out, 'client.cjs');
const launcher = join(root, 'dist/src/cli/launch.cjs');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

/**
 * Bundles entry (a module of dist/src/cli) into outfile, as the launcher loads it. Packages stay in
 * node_modules, but those named in inline: the client bundle holds ws (exec, port-forward), which
 * otherwise loads as a dozen files, its TLS and zlib loaded on first use; ws's optional native helpers stay out.
 */
async function bundle(entry, outfile, inline = []) {
  await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    ...(inline.length ? { plugins: [builtinsOnFirstUse('ws', ['tls', 'https', 'zlib']), packagesOutsideOf(inline)] } : { packages: 'external' }),
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
  const body = readFileSync(outfile, 'utf8').replace(/^#!.*\n/, '');
  if (/[^\x00-\x7f]/.test(body)) throw new Error(`bundle: ${outfile} holds non-ASCII characters`);
  writeFileSync(outfile, `(function (exports, require, module, __filename, __dirname) {${body}\n})`);
}

/** An esbuild plugin keeping every package but those of inline external, as packages: 'external' does. */
function packagesOutsideOf(inline) {
  return {
    name: 'packages-outside',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
        return inline.includes(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/**
 * An esbuild plugin giving the modules of pkg each of builtins as an object that requires it on first
 * use: ws requires tls, https and zlib as it loads, and uses them only for wss:// URLs and compressed
 * messages, neither of which podvisor's exec and port-forward make.
 */
function builtinsOnFirstUse(pkg, builtins) {
  const filter = new RegExp(`^(node:)?(${builtins.join('|')})$`);
  return {
    name: 'builtins-on-first-use',
    setup(b) {
      b.onResolve({ filter }, (args) =>
        args.importer.includes(`/node_modules/${pkg}/`) ? { path: args.path.replace(/^node:/, ''), namespace: 'builtin-on-first-use' } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'builtin-on-first-use' }, (args) => ({
        contents:
          `let loaded; const load = () => (loaded ??= require('node:${args.path}'));\n` +
          'module.exports = new Proxy({}, { get: (_, key) => load()[key], has: (_, key) => key in load() });\n',
        loader: 'js',
      }));
    },
  };
}

/** Makes outfile's code cache: the launcher writes it at the exit of a run of `podvisor ARGS`. */
function trainCodeCache(outfile, args) {
  const cache = `${outfile}.cache`;
  const run = spawnSync(process.execPath, [launcher, ...args], {
    cwd: root,
    env: { ...process.env, PODVISOR_CODE_CACHE_OUT: cache },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (run.status !== 0 || !existsSync(cache)) {
    console.error(`bundle: the run that makes the code cache of ${outfile} failed (status ${run.status})`);
    process.exit(1);
  }
}

await bundle('dist/src/cli/main.js', fullBundle);
await bundle('dist/src/cli/client-main.js', clientBundle, ['ws']);
for (const file of ['src/api/schema.generated.json', 'src/api/field-order.generated.json']) {
  writeFileSync(join(out, file.split('/').pop()), JSON.stringify(JSON.parse(readFileSync(join(root, file), 'utf8'))));
}
copyFileSync(join(root, 'src/runtime/cri/api.proto'), join(out, 'api.proto'));
// The Kubernetes protobuf schemas the API's codec reads (src/http/protobuf.ts).
cpSync(join(root, 'src/http/proto'), join(out, 'proto'), { recursive: true });
// The vendored OpenAPI document the API's /openapi/v2 and v3 are cut from (src/kubeapi/openapi.ts).
cpSync(join(root, 'src/kubeapi/openapi-spec'), join(out, 'openapi-spec'), { recursive: true });

// bin/podvisor, the clone's own executable, is a link to the launcher: it must be executable.
chmodSync(launcher, 0o755);

trainCodeCache(fullBundle, ['validate', '-f', 'examples/']);
trainCodeCache(clientBundle, ['--version']);
