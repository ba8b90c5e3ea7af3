#!/usr/bin/env node
// The `podvisor` executable: runs a bundled CLI with its code cache (bundle-loader.cts), the client
// bundle for `--version` and the client commands, the full one otherwise. Without a current bundle (a
// build that ran tsc alone, or tsc ran again since) it runs main.js, the same code as modules, only
// slower to start.

import { bundleFor, loadBundle } from './bundle-loader.cjs';

const bundle = bundleFor(process.argv.slice(2));
if (bundle) {
  // The build's training runs name the file the code cache goes to (scripts/bundle.mjs).
  loadBundle(bundle, process.env.PODVISOR_CODE_CACHE_OUT || undefined).runExecutable();
} else {
  void import('./main.js').then((m) => m.runExecutable());
}
