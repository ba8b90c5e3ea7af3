// Public manifests as shipped: Google's microservices demo (release/kubernetes-manifests.yaml) and
// podinfo's kustomize/ output pass `podvisor validate` and `podvisor apply` on a containerd agent,
// every object created and stored (image pulls are pointed at a closed port: only the API's
// acceptance of the objects is checked here, not the images).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { mountsUnder } from '../../src/runtime/containerd/managed.js';
import { runCli, startCli } from '../fixtures/cli/cli-process.js';
import { skipReason } from './harness.js';

const skip = await skipReason();
const fixtures = fileURLToPath(new URL('../../../test/fixtures', import.meta.url));
const files = [join(fixtures, 'microservices-demo/kubernetes-manifests.yaml'), join(fixtures, 'podinfo/kustomize-output.yaml')];

/** `kind.group/name` as kubectl prints each object of the files. */
function objectNames(file: string): string[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as { apiVersion: string; kind: string; metadata: { name: string } } | null)
    .filter((o) => o !== null)
    .map((o) => {
      const group = o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : '';
      return `${o.kind.toLowerCase()}${group}/${o.metadata.name}`;
    });
}

test('podvisor validate accepts every object of the microservices demo and podinfo, as shipped', async () => {
  for (const f of files) {
    const r = await runCli(['validate', '-f', f]);
    assert.equal(r.code, 0, r.stderr);
    const names = objectNames(f);
    assert.ok(names.length > 0);
    for (const n of names) assert.match(r.stdout, new RegExp(`^${n.replace(/\./g, '\\.')} validated$`, 'm'));
  }
});

test('podvisor apply on a containerd agent creates and stores every object of both, as shipped', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-public-'));
  const root = join(dir, 'root');
  const hosts = join(dir, 'registry-config');
  for (const h of ['us-central1-docker.pkg.dev', 'ghcr.io', 'docker.io']) {
    mkdirSync(join(hosts, h), { recursive: true });
    writeFileSync(join(hosts, h, 'hosts.toml'), `server = "http://127.0.0.1:1"\n`);
  }
  const agent = startCli(['agent', '--runtime=containerd', `--registry-config=${hosts}`, `--root-dir=${root}`]);
  try {
    await agent.waitFor('stderr', /podvisor agent started/, 90_000);
    const applied = await runCli(['apply', ...files.flatMap((f) => ['-f', f]), `--root-dir=${root}`]);
    assert.equal(applied.code, 0, `${applied.stdout}\n${applied.stderr}`);
    const names = files.flatMap(objectNames);
    assert.equal(names.length, 38);
    for (const n of names) assert.match(applied.stdout, new RegExp(`^${n.replace(/\./g, '\\.')} created$`, 'm'));
    const stored = await runCli(['get', 'deploy,svc,sa,hpa', '-o', 'name', `--root-dir=${root}`]);
    assert.equal(stored.code, 0, stored.stderr);
    for (const n of names) assert.match(stored.stdout, new RegExp(`^${n.replace(/\./g, '\\.')}$`, 'm'));
    // Applied again, as shipped: nothing changes.
    const again = await runCli(['apply', ...files.flatMap((f) => ['-f', f]), `--root-dir=${root}`]);
    assert.equal(again.code, 0, again.stderr);
    for (const n of names) assert.match(again.stdout, new RegExp(`^${n.replace(/\./g, '\\.')} unchanged$`, 'm'));
  } finally {
    const down = await runCli(['down', '--all', '--agent', '--grace-period=0', `--root-dir=${root}`]);
    agent.child.kill('SIGTERM');
    await agent.exited;
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(mountsUnder(root), []);
    rmSync(dir, { recursive: true, force: true });
  }
});
