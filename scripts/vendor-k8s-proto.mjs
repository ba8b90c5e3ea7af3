// Vendors the Kubernetes protobuf schemas the API's protobuf codec (src/http/protobuf.ts) reads: the
// generated.proto files of k8s.io/api and k8s.io/apimachinery at one release, copied unchanged
// (Apache-2.0 headers kept) into src/http/proto/, and go-fields.json: per message, the fields the Go
// types declare as pointers (present on the wire only when set, so a zero there is a value) and the
// ones inlined into their parent's JSON (`json:",inline"`), read from the same release's types.go.
//
//   node scripts/vendor-k8s-proto.mjs API_GIT_DIR APIMACHINERY_GIT_DIR TAG
//
// The git dirs are clones of github.com/kubernetes/api and github.com/kubernetes/apimachinery (the
// published copies of kubernetes/kubernetes' staging/src/k8s.io/api and apimachinery); TAG is their
// tag of the release (v0.30.14 for Kubernetes 1.30.14).

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [apiDir, machineryDir, tag] = process.argv.slice(2);
if (!apiDir || !machineryDir || !tag) {
  console.error('usage: node scripts/vendor-k8s-proto.mjs API_GIT_DIR APIMACHINERY_GIT_DIR TAG');
  process.exit(2);
}
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'http', 'proto');

/** The API groups whose kinds podvisor serves or is to serve, as k8s.io/api package paths. */
const apiPackages = [
  'core/v1',
  'apps/v1',
  'batch/v1',
  'batch/v1beta1',
  'discovery/v1',
  'rbac/v1',
  'autoscaling/v1',
  'autoscaling/v2',
  'policy/v1',
  'networking/v1',
  'scheduling/v1',
  'authentication/v1',
  'authorization/v1',
  'coordination/v1',
  'node/v1',
];
const machineryPackages = ['pkg/api/resource', 'pkg/apis/meta/v1', 'pkg/runtime', 'pkg/runtime/schema', 'pkg/util/intstr'];

const show = (dir, path) => execFileSync('git', ['--git-dir', dir, 'show', `${tag}:${path}`], { encoding: 'utf8', maxBuffer: 64 << 20 });
const goFiles = (dir, pkg) =>
  execFileSync('git', ['--git-dir', dir, 'ls-tree', '--name-only', `${tag}`, `${pkg}/`], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => /\/[a-z_]+\.go$/.test(f) && !f.endsWith('_test.go') && !/generated|zz_/.test(f));

const fields = {};

/** Pointer and inline fields of every struct of a Go package, keyed by the proto message name. */
function readGoStructs(dir, pkg, protoPackage) {
  for (const file of goFiles(dir, pkg)) {
    let current;
    for (const line of show(dir, file).split('\n')) {
      const start = /^type (\w+) struct \{/.exec(line);
      if (start) {
        current = { name: `${protoPackage}.${start[1]}`, pointers: [], inline: [] };
        continue;
      }
      if (!current) continue;
      if (line === '}') {
        if (current.pointers.length || current.inline.length) {
          fields[current.name] = {
            ...(current.pointers.length ? { pointers: current.pointers } : {}),
            ...(current.inline.length ? { inline: current.inline } : {}),
          };
        }
        current = undefined;
        continue;
      }
      const m = /^\t(?:(\w+)\s+)?(\S+)\s+`([^`]*)`/.exec(line);
      if (!m) continue;
      const proto = /protobuf:"[^"]*name=(\w+)/.exec(m[3]);
      if (!proto) continue;
      const json = /json:"([^"]*)"/.exec(m[3]);
      if (json && json[1].startsWith(',inline')) current.inline.push(proto[1]);
      if (m[2].startsWith('*')) current.pointers.push(proto[1]);
    }
  }
}

for (const pkg of apiPackages) {
  const path = join(out, 'k8s.io', 'api', pkg, 'generated.proto');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, show(apiDir, `${pkg}/generated.proto`));
  readGoStructs(apiDir, pkg, `k8s.io.api.${pkg.replace('/', '.')}`);
}
for (const pkg of machineryPackages) {
  const path = join(out, 'k8s.io', 'apimachinery', pkg, 'generated.proto');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, show(machineryDir, `${pkg}/generated.proto`));
  readGoStructs(machineryDir, pkg, `k8s.io.apimachinery.${pkg.replaceAll('/', '.')}`);
}
const sorted = Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(
  join(out, 'go-fields.json'),
  `${JSON.stringify({ source: `k8s.io/api and k8s.io/apimachinery ${tag}`, packages: [...apiPackages.map((p) => `k8s.io/api/${p}`), ...machineryPackages.map((p) => `k8s.io/apimachinery/${p}`)], messages: sorted }, null, 1)}\n`,
);
console.log(
  `vendored ${apiPackages.length + machineryPackages.length} generated.proto files and ${Object.keys(sorted).length} messages' Go fields into ${out}`,
);
