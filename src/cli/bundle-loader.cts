// Loading the bundled CLI (dist/bundle/podvisor.cjs, made by scripts/bundle.mjs) the way the
// `podvisor` executable does: compiled with the V8 code cache made beside it at build time. On Node 20
// an ES module graph is read file by file and compiled from source on every start, which cost more
// than Node's own start; one CommonJS file and its cache start in a fraction of that.

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script, constants as vmConstants } from 'node:vm';

/** What the bundle exports: the CLI as a function and as this process's command. */
export interface BundledCLI {
  runExecutable(): void;
  main(argv: readonly string[], io: import('./args.js').CommandIO): Promise<number>;
}

/** The bundle next to the compiled modules (dist/src/cli → dist/bundle). */
export const bundlePath = join(__dirname, '../../bundle/podvisor.cjs');

/** Whether the bundle exists and was built from the current modules (not before main.js was written). */
export function bundleIsCurrent(bundle = bundlePath, mainJs = join(__dirname, 'main.js')): boolean {
  const built = statSync(bundle, { throwIfNoEntry: false });
  const main = statSync(mainJs, { throwIfNoEntry: false });
  return built !== undefined && (main === undefined || built.mtimeMs >= main.mtimeMs);
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
export function loadBundle(bundle = bundlePath, cacheOut?: string): BundledCLI {
  const script = compileBundle(bundle);
  if (cacheOut) process.once('exit', () => writeFileSync(cacheOut, script.createCachedData()));
  const mod = { exports: {} as BundledCLI };
  (script.runInThisContext() as (...args: unknown[]) => void)(mod.exports, createRequire(bundle), mod, bundle, dirname(bundle));
  return mod.exports;
}
