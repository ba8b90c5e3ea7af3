#!/usr/bin/env node
// The `podvisor` executable: runs the bundled CLI with its code cache (bundle-loader.cts). Without a
// current bundle (a build that ran tsc alone, or tsc ran again since) it runs main.js, the same code
// as modules, only slower to start.

import { bundleIsCurrent, loadBundle } from './bundle-loader.cjs';

if (bundleIsCurrent()) {
  // The build's training run names the file its code cache goes to (scripts/bundle.mjs).
  loadBundle(undefined, process.env.PODVISOR_CODE_CACHE_OUT || undefined).runExecutable();
} else {
  void import('./main.js').then((m) => m.runExecutable());
}
