// Loading the bundled CLI (dist/bundle/, made by scripts/bundle.mjs) the way the `podvisor` executable
// does: compiled with the V8 code cache made beside it at build time. On Node 20 an ES module graph is
// read file by file and compiled from source on every start, which cost more than Node's own start;
// one CommonJS file and its cache start in a fraction of that. There are two: client.cjs, `--version`
// and the commands that only talk to a running agent, and podvisor.cjs, the whole CLI.

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script, constants as vmConstants } from 'node:vm';

/** What a bundle exports: the CLI as this process's command. */
export interface BundledCLI {
  runExecutable(): void;
}

/** The whole CLI (main.ts) as the bundle exports it, for tests. */
export interface BundledFullCLI extends BundledCLI {
  main(argv: readonly string[], io: import('./args.js').CommandIO): Promise<number>;
}

/** The bundles next to the compiled modules (dist/src/cli → dist/bundle). */
export const bundlePath = join(__dirname, '../../bundle/podvisor.cjs');
export const clientBundlePath = join(__dirname, '../../bundle/client.cjs');

/**
 * The first arguments the client bundle runs (client-main.ts's clientCommands, and --version). Only
 * these: help, a mistyped name and every other command go to the full CLI, whose words they are.
 */
export const clientCommandNames: ReadonlySet<string> = new Set(['--version', 'version', 'get', 'logs', 'describe', 'exec', 'top', 'probes', 'port-forward']);

/** Whether the bundle exists and was built from the current modules (not before entryJs was written). */
export function bundleIsCurrent(bundle = bundlePath, entryJs = join(__dirname, 'main.js')): boolean {
  const built = statSync(bundle, { throwIfNoEntry: false });
  const entry = statSync(entryJs, { throwIfNoEntry: false });
  return built !== undefined && (entry === undefined || built.mtimeMs >= entry.mtimeMs);
}

/** The bundle for argv (without node and script): the client bundle when it runs argv and is current, else the full one; undefined when neither is current. */
export function bundleFor(argv: readonly string[]): string | undefined {
  if (clientCommandNames.has(argv[0] ?? '') && bundleIsCurrent(clientBundlePath, join(__dirname, 'client-main.js'))) return clientBundlePath;
  return bundleIsCurrent() ? bundlePath : undefined;
}

/** The bundle compiled with its code cache (from source when the cache is missing or stale). */
export function compileBundle(bundle = bundlePath): Script {
  // The file is ASCII and already the CommonJS wrapper function (scripts/bundle.mjs writes it so).
  const source = readFileSync(bundle, 'latin1');
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(`${bundle}.cache`);
  } catch {
    // no cache: compiled from source
  }
  return new Script(source, {
    filename: bundle,
    ...(cachedData ? { cachedData } : {}),
    // import() of a package from the bundle goes to Node's own loader (Node 20.12 and later).
    ...(vmConstants?.USE_MAIN_CONTEXT_DEFAULT_LOADER ? { importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER } : {}),
  });
}

/**
 * Runs the bundle's module code and returns its exports. With cacheOut, the code cache is written
 * there when the process exits, holding every function the run compiled (the build's training run).
 */
export function loadBundle<T extends BundledCLI = BundledFullCLI>(bundle = bundlePath, cacheOut?: string): T {
  const script = compileBundle(bundle);
  if (cacheOut) process.once('exit', () => writeFileSync(cacheOut, script.createCachedData()));
  const mod = { exports: {} as T };
  (script.runInThisContext() as (...args: unknown[]) => void)(mod.exports, createRequire(bundle), mod, bundle, dirname(bundle));
  return mod.exports;
}
