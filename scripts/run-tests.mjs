#!/usr/bin/env node
// Runs the compiled test files under dist/test with Node's built-in test runner: all of them
// (`npm test`), or with --unit only the fast ones that need no root and no service (`npm run test:unit`).
// A file list is passed explicitly because Node 20's `--test` does not expand globs.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { spawnSync } from 'node:child_process';

// What makes a test a system test, left out by --unit. A new file is placed by where it lives and by
// what it uses: under one of these folders, or importing one of these fixtures, it is a system test;
// anywhere else, using none of them, it is a unit test.
const SYSTEM_FOLDERS = [
  'containerd', // a private containerd and image registry (root)
  'bench', // the benchmark harness end to end
];
const SYSTEM_FIXTURES = [
  /from '[^']*fixtures\/cli\/cli-process\.js'/, // the built CLI as real processes, agents included
  /from '[^']*containerd\/harness\.js'/, // containerd
  /from '[^']*control-plane\.js'/, // a real kube-apiserver and etcd
  /import \{[^}]*\bkubectl\w*[^}]*\} from '[^']*harness\.js'/, // kubectl
];
// Files that need no such fixture but root, the whole build or minutes of load, named one by one.
const SYSTEM_FILES = [
  'config/fuzz.test.js', // 10,000 generated manifests, some through the built executable
  'runtime/containment.test.js', // cgroups, OOM kills and user switches as root
  'runtime/pod-network.test.js', // network namespaces and the CNI plugins as root
  'prober/wire.test.js', // thousands of probes against server processes
  'prober/sockets.test.js', // thousands of probes, then the host's TIME_WAIT table
  'kubeapi/clients.test.js', // the JavaScript and Python Kubernetes clients against a server
  'cli/bundle.test.js', // the bundle `npm run build` writes
  'cli/validate.test.js', // the built executable, run once per case
];

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

function isSystemTest(file) {
  const rel = relative(join('dist', 'test'), file).split(sep).join('/');
  if (SYSTEM_FOLDERS.includes(rel.split('/')[0])) return true;
  if (SYSTEM_FILES.includes(rel)) return true;
  const text = readFileSync(file, 'utf8');
  return SYSTEM_FIXTURES.some((re) => re.test(text));
}

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const listOnly = args.includes('--list');
const paths = args.filter((a) => !a.startsWith('--'));
const roots = paths.length ? paths : ['dist/test'];
let files = roots.flatMap((r) => (statSync(r).isDirectory() ? collect(r, []) : [r]));
if (unitOnly) files = files.filter((f) => !isSystemTest(f));
if (files.length === 0) {
  console.error('no test files found under', roots.join(' '));
  process.exit(1);
}
if (listOnly) {
  console.log(files.join('\n'));
  process.exit(0);
}
const res = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=180000', ...files], { stdio: 'inherit' });
process.exit(res.status ?? 1);
