// Malicious and huge manifests: each fails with a clear error naming its file (and line:column),
// never hides another file's errors, never shows an internal exception, and takes time linear in
// its size. Limits: nesting depth, alias expansions, source size; the API server's int32 ranges,
// object sizes and a UID that must stay one path component.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { loadManifests, ManifestError, type LoadOptions } from '../../src/config/load.js';
import { readSources } from '../../src/config/sources.js';
import { maxAliasCount, maxNestingDepth, maxSourceBytes } from '../../src/config/limits.js';

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-hostile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function problems(sources: string[], opts: LoadOptions): Promise<string[]> {
  try {
    await loadManifests(sources, { nodeName: 'node-1', ...opts });
  } catch (err) {
    assert.ok(err instanceof ManifestError, String(err));
    for (const p of err.problems) assert.doesNotMatch(p, /\n\s+at |TypeError|ReferenceError|RangeError|Cannot read prop/, p);
    return err.problems;
  }
  assert.fail('expected loading to fail');
}

const pod = (name: string, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
  - name: c
    image: busybox
    command: [sleep, '3600']
${extra}`;

const typo = pod('typo').replace('image:', 'imagee:');
const typoError = /^error: typo\.yaml:8:5: spec\.containers\[0\]\.imagee: unknown field "imagee"/;
const typoInvalid = 'The Pod "typo" is invalid: spec.containers[0].image: Required value';

test('deep nesting (YAML flow, YAML block, JSON) fails per file with its position; other files keep their errors', async (t) => {
  const dir = scratch(t);
  const n = 100_000;
  writeFileSync(join(dir, 'a-flow.yaml'), `apiVersion: v1\nkind: Pod\nmetadata:\n  annotations: ${'['.repeat(n)}${']'.repeat(n)}\n`);
  let block = 'apiVersion: v1\nkind: Pod\nmetadata:\n';
  for (let i = 0; i < 1500; i++) block += `${' '.repeat(i + 2)}k${i}:\n`;
  writeFileSync(join(dir, 'b-block.yaml'), block);
  writeFileSync(join(dir, 'c-deep.json'), `{"apiVersion":"v1","kind":"Pod","spec":${'['.repeat(n)}${']'.repeat(n)}}`);
  writeFileSync(join(dir, 'd-seq.yaml'), `${'- '.repeat(5000)}x\n`);
  writeFileSync(join(dir, 'typo.yaml'), typo);
  const got = await problems(['.'], { cwd: dir });
  const limit = `nesting is deeper than ${maxNestingDepth} levels`;
  assert.equal(got.length, 6, got.join('\n'));
  assert.match(got[0]!, new RegExp(`^error: a-flow\\.yaml:4:\\d+: ${limit}$`));
  assert.match(got[1]!, new RegExp(`^error: b-block\\.yaml:\\d+:\\d+: ${limit}$`));
  assert.match(got[2]!, new RegExp(`^error: c-deep\\.json:1:\\d+: ${limit}$`));
  assert.match(got[3]!, new RegExp(`^error: d-seq\\.yaml:1:\\d+: ${limit}$`));
  assert.match(got[4]!, typoError);
  assert.equal(got[5], typoInvalid);
});

test('nesting below the limit is parsed (the check never stops a real manifest)', async (t) => {
  const dir = scratch(t);
  const depth = maxNestingDepth - 20;
  // Deep, but inside a field that holds any value: the loader reads it and reports the Pod's own errors.
  writeFileSync(
    join(dir, 'deep.json'),
    `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}],"x":${'['.repeat(depth)}${']'.repeat(depth)}}}`,
  );
  writeFileSync(
    join(dir, 'deep.yaml'),
    `apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers: [{name: c, image: i}]\n  x: ${'['.repeat(depth)}${']'.repeat(depth)}\n`,
  );
  const got = await problems(['deep.json', 'deep.yaml'], { cwd: dir });
  assert.deepEqual(got, ['error: deep.json:1:129: spec.x: unknown field "x"', 'error: deep.yaml:6:3: spec.x: unknown field "x"']);
});

test('an alias bomb fails naming its file; an ordinary pod with 100 references to one anchor loads', async (t) => {
  const dir = scratch(t);
  let bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  for (let i = 1; i < 10; i++) {
    const prev = String.fromCharCode(96 + i);
    const cur = String.fromCharCode(97 + i);
    bomb += `${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
  }
  writeFileSync(join(dir, 'bomb.yaml'), bomb);
  writeFileSync(join(dir, 'typo.yaml'), typo);
  const started = Date.now();
  const got = await problems(['bomb.yaml', 'typo.yaml'], { cwd: dir });
  assert.ok(Date.now() - started < 10_000, 'rejected without expanding');
  assert.equal(got.length, 3, got.join('\n'));
  assert.equal(got[0], `error: bomb.yaml:1:1: document 0: document contains excessive aliasing (more than ${maxAliasCount} alias expansions)`);
  assert.match(got[1]!, typoError);

  const env = Array.from({ length: 100 }, (_, i) => `    - {name: V${i}, value: *shared}`).join('\n');
  const refs = pod('refs', '')
    .replace("command: [sleep, '3600']", `command: [sleep, '3600']\n    env:\n${env}`)
    .replace('metadata:\n', 'metadata:\n  annotations: {x: &shared "same"}\n');
  writeFileSync(join(dir, 'refs.yaml'), refs);
  const m = await loadManifests(['refs.yaml'], { cwd: dir, nodeName: 'node-1' });
  assert.equal(m.pods[0]!.spec!.containers[0]!.env!.length, 100);
  assert.equal(m.pods[0]!.spec!.containers[0]!.env![99]!.value, 'same');
});

test('a merge key where a value belongs is a clean field error', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'merge.yaml'), pod('m', '    ports:\n    - containerPort: !!merge <<\n'));
  assert.deepEqual(await problems(['merge.yaml'], { cwd: dir }), [
    'error: merge.yaml:11:30: spec.containers[0].ports[0].containerPort: Invalid value: "<<": must be an integer',
  ]);
});

test('a 200 KB one-line JSON file, valid or not, is read in linear time', async (t) => {
  const dir = scratch(t);
  const containers = Array.from({ length: 8000 }, (_, i) => `{"name":"c${i}","image":"i"}`).join(',');
  writeFileSync(join(dir, 'long.json'), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[${containers},]}}`);
  writeFileSync(join(dir, 'long2.json'), `{"a":[${'1 '.repeat(100_000)}]}`);
  const started = Date.now();
  const got = await problems(['long.json', 'long2.json'], { cwd: dir });
  assert.ok(Date.now() - started < 10_000, `${Date.now() - started} ms`);
  assert.match(got[0]!, /^error: long\.json:1:\d{6}: invalid JSON: Unexpected token '\]'$/);
  assert.equal(got[1], "error: long2.json:1:9: invalid JSON: Expected ',' or ']' after array element");
});

test('a source over the size cap is refused unread, naming it; stdin too', async (t) => {
  const dir = scratch(t);
  const huge = join(dir, 'huge.yaml');
  writeFileSync(huge, '');
  truncateSync(huge, maxSourceBytes + 1);
  writeFileSync(join(dir, 'typo.yaml'), typo);
  const got = await problems(['huge.yaml', 'typo.yaml'], { cwd: dir });
  assert.deepEqual(got[0], `error: huge.yaml: the file is ${maxSourceBytes + 1} bytes; podvisor reads manifest files of at most ${maxSourceBytes} bytes`);
  assert.match(got[1]!, typoError);
  assert.equal(got[2], typoInvalid);
  const read = await readSources(['-'], { stdin: () => Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), maxBytes: 1000 });
  assert.deepEqual(read.errors, ['error: STDIN: the file is over 1000 bytes; podvisor reads manifest files of at most 1000 bytes']);
});

test('a named pipe given with -f is read as a stream, within the same cap', { timeout: 30_000 }, async (t) => {
  const dir = scratch(t);
  const fifo = join(dir, 'pods.yaml');
  const write = (text: string) => {
    execFileSync('mkfifo', [fifo]);
    // The writer opens the pipe in a child; the reader's open waits for it without holding the caller.
    const writer = spawn('sh', ['-c', 'cat > "$0"', fifo], { stdio: ['pipe', 'ignore', 'ignore'] });
    writer.stdin.end(text);
    return writer;
  };
  const small = write('apiVersion: v1\nkind: Pod\n');
  const smallExit = once(small, 'exit');
  const read = await readSources([fifo], {});
  await smallExit;
  assert.deepEqual(read.errors, []);
  assert.equal(read.files[0]!.text, 'apiVersion: v1\nkind: Pod\n');
  rmSync(fifo);
  const big = write('x'.repeat(5000));
  const over = await readSources([fifo], { maxBytes: 1000 });
  big.kill();
  assert.deepEqual(over.errors, [`error: ${fifo}: the file is over 1000 bytes; podvisor reads manifest files of at most 1000 bytes`]);
});

test('int32 fields out of range fail as the API server decodes them; large valid int64 values load', async (t) => {
  const dir = scratch(t);
  const probe = (field: string, value: string) => `    livenessProbe:\n      exec: {command: ['true']}\n      ${field}: ${value}\n`;
  writeFileSync(join(dir, 'timeout.yaml'), pod('tmo', probe('timeoutSeconds', '3000000000')));
  writeFileSync(join(dir, 'period.yaml'), pod('per', probe('periodSeconds', '2147483648')));
  writeFileSync(join(dir, 'negative.yaml'), pod('neg', '    ports:\n    - containerPort: -2147483649\n'));
  const got = await problems(['timeout.yaml', 'period.yaml', 'negative.yaml'], { cwd: dir });
  assert.deepEqual(got, [
    'error: timeout.yaml:12:23: spec.containers[0].livenessProbe.timeoutSeconds: Invalid value: 3000000000: cannot unmarshal number 3000000000 into Go struct field Probe.spec.containers.livenessProbe.timeoutSeconds of type int32',
    'error: period.yaml:12:22: spec.containers[0].livenessProbe.periodSeconds: Invalid value: 2147483648: cannot unmarshal number 2147483648 into Go struct field Probe.spec.containers.livenessProbe.periodSeconds of type int32',
    'error: negative.yaml:11:22: spec.containers[0].ports[0].containerPort: Invalid value: -2147483649: cannot unmarshal number -2147483649 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
  ]);
  writeFileSync(
    join(dir, 'ok.yaml'),
    `${pod('ok', probe('timeoutSeconds', '3000000') + '    securityContext: {runAsUser: 4294967296}\n')}  terminationGracePeriodSeconds: 3000000\n  activeDeadlineSeconds: 2147483647\n`,
  );
  const m = await loadManifests(['ok.yaml'], { cwd: dir, nodeName: 'node-1' });
  assert.equal(m.pods[0]!.spec!.terminationGracePeriodSeconds, 3000000);
  assert.equal(m.pods[0]!.spec!.containers[0]!.livenessProbe!.timeoutSeconds, 3000000);
});

test("ConfigMap and Secret data over 1 MiB: the API server's messages", async (t) => {
  const dir = scratch(t);
  const big = 'x'.repeat(1024 * 1024 + 1);
  writeFileSync(
    join(dir, 'big.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  a: ${big}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: big}\nstringData:\n  a: ${big}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: fits}\ndata:\n  a: ${'x'.repeat(1024 * 1024)}\n`,
  );
  assert.deepEqual(await problems(['big.yaml'], { cwd: dir }), [
    'The ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes',
    'The Secret "big" is invalid: data: Too long: must have at most 1048576 bytes',
  ]);
});

test('metadata.uid must be one safe path component', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'uid.yaml'), pod('u').replace('metadata:\n', 'metadata:\n  uid: ../../victim\n'));
  writeFileSync(join(dir, 'dots.yaml'), pod('d').replace('metadata:\n', 'metadata:\n  uid: ..\n'));
  assert.deepEqual(await problems(['uid.yaml', 'dots.yaml'], { cwd: dir }), [
    "The Pod \"u\" is invalid: metadata.uid: Invalid value: \"../../victim\": a valid UID must consist of alphanumeric characters, '-', '_' or '.' (e.g. '3f2b5c1e-0d4e-4c3a-9a51-6d2f8e7b9c10', regex used for validation is '[-._a-zA-Z0-9]+')",
    'The Pod "d" is invalid: metadata.uid: Invalid value: "..": must not be \'..\'',
  ]);
  writeFileSync(join(dir, 'good.yaml'), pod('g').replace('metadata:\n', 'metadata:\n  uid: 3f2b5c1e-0d4e-4c3a-9a51-6d2f8e7b9c10\n'));
  const m = await loadManifests(['good.yaml'], { cwd: dir, nodeName: 'node-1' });
  assert.equal(m.pods[0]!.metadata!.uid, '3f2b5c1e-0d4e-4c3a-9a51-6d2f8e7b9c10');
});

test('a directory with a non-manifest YAML: every file\'s error at once, kubectl\'s "unable to recognize"; -R descends', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'config.yaml'), 'port: 8080\nlog: debug\n');
  writeFileSync(join(dir, 'typo.yaml'), typo);
  writeFileSync(join(dir, 'web.yaml'), pod('web'));
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'inner.yaml'), pod('inner'));
  writeFileSync(join(dir, 'sub', 'bad.json'), '{"apiVersion": "v1", "kind": "Pod",');
  const got = await problems(['.'], { cwd: dir });
  assert.equal(got.length, 3, got.join('\n'));
  assert.equal(got[0], 'error: unable to recognize "config.yaml": config.yaml:1:1: document 0: apiVersion not set, kind not set');
  assert.match(got[1]!, typoError);
  const deep = await problems(['.'], { cwd: dir, recursive: true });
  assert.equal(deep.length, 4, deep.join('\n'));
  assert.match(deep[0]!, /^error: sub\/bad\.json:1:\d+: /);
  rmSync(join(dir, 'config.yaml'));
  rmSync(join(dir, 'typo.yaml'));
  rmSync(join(dir, 'sub', 'bad.json'));
  const m = await loadManifests(['.'], { cwd: dir, nodeName: 'node-1', recursive: true });
  assert.deepEqual(
    m.pods.map((p) => p.metadata?.name),
    ['inner', 'web'],
  );
  const flat = await loadManifests(['.'], { cwd: dir, nodeName: 'node-1' });
  assert.deepEqual(
    flat.pods.map((p) => p.metadata?.name),
    ['web'],
  );
});

test('the JSON fast path keeps locations: a validation error in a .json file names its line and column', async (t) => {
  const dir = scratch(t);
  writeFileSync(
    join(dir, 'p.json'),
    JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i', imagePolicy: 'x' }] } }, null, 2),
  );
  assert.deepEqual(await problems(['p.json'], { cwd: dir }), ['error: p.json:12:9: spec.containers[0].imagePolicy: unknown field "imagePolicy"']);
});
