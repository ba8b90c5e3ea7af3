#!/usr/bin/env node
// Runs every compiled test file under dist/test with Node's built-in test runner.
// A file list is passed explicitly because Node 20's `--test` does not expand globs.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['dist/test'];
const files = roots.flatMap((r) => (statSync(r).isDirectory() ? collect(r, []) : [r]));
if (files.length === 0) {
  console.error('no test files found under', roots.join(' '));
  process.exit(1);
}
const res = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=180000', ...files],
  { stdio: 'inherit' },
);
process.exit(res.status ?? 1);
