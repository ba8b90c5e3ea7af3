// Objects are printed in the API server's field order (Go struct order, map keys sorted) by one
// serializer, whichever command prints them: validate -o yaml|json, run -o yaml|json.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { inApiOrder } from '../../src/api/field-order.js';
import { formatObject } from '../../src/printers/json-yaml.js';
import { mainJs, runCli, tempDir } from '../fixtures/cli/cli-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Every object's keys, depth first, as `path: k1,k2,…`. */
function keyOrders(v: unknown, path = '', out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x, i) => keyOrders(x, `${path}[${i}]`, out));
  else if (v !== null && typeof v === 'object') {
    out.push(`${path || '.'}: ${Object.keys(v).join(',')}`);
    for (const [k, x] of Object.entries(v)) keyOrders(x, `${path}.${k}`, out);
  }
  return out;
}

test('inApiOrder: Go struct order, embedded structs in place, maps sorted, unknown fields last', () => {
  const pod = {
    status: { phase: 'Running' },
    spec: {
      restartPolicy: 'Always',
      containers: [
        {
          readinessProbe: { periodSeconds: 1, httpGet: { port: 80, path: '/' }, initialDelaySeconds: 2 },
          resources: { requests: { memory: '1Mi', cpu: '1' }, limits: { cpu: '2' } },
          image: 'x',
          name: 'c',
          zNewField: true,
          aNewField: 1,
        },
      ],
    },
    metadata: { labels: { b: '1', a: '2' }, namespace: 'ns', name: 'p', undef: undefined },
    apiVersion: 'v1',
    kind: 'Pod',
  };
  assert.deepEqual(keyOrders(inApiOrder(pod)), [
    '.: kind,apiVersion,metadata,spec,status',
    '.metadata: name,namespace,labels',
    '.metadata.labels: a,b',
    '.spec: containers,restartPolicy',
    '.spec.containers[0]: name,image,resources,readinessProbe,aNewField,zNewField',
    '.spec.containers[0].resources: limits,requests',
    '.spec.containers[0].resources.limits: cpu',
    '.spec.containers[0].resources.requests: cpu,memory',
    // ProbeHandler is embedded in Probe: its httpGet comes first, in its place.
    '.spec.containers[0].readinessProbe: httpGet,initialDelaySeconds,periodSeconds',
    '.spec.containers[0].readinessProbe.httpGet: path,port',
    '.status: phase',
  ]);
  const list = inApiOrder({
    items: [pod, { data: { z: '1', a: '2' }, metadata: { name: 'cm' }, kind: 'ConfigMap', apiVersion: 'v1' }],
    metadata: {},
    kind: 'List',
    apiVersion: 'v1',
  });
  assert.deepEqual(
    keyOrders(list).filter((l) => !l.startsWith('.items[0].')),
    [
      '.: kind,apiVersion,metadata,items',
      '.metadata: ',
      '.items[0]: kind,apiVersion,metadata,spec,status',
      '.items[1]: kind,apiVersion,metadata,data',
      '.items[1].metadata: name',
      '.items[1].data: a,z',
    ],
  );
});

test('validate -o yaml and run -o yaml print the same pod with the same field order', async () => {
  const v = spawnSync(process.execPath, [mainJs, 'validate', '-f', 'examples/job.yaml', '-o', 'yaml'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.equal(v.status, 0, v.stderr);
  const tmp = await tempDir();
  try {
    const r = await runCli(['run', '-f', join(root, 'examples/job.yaml'), '--root-dir', join(tmp.path, 'root'), '-o', 'yaml']);
    assert.equal(r.code, 0, r.stderr);
    const validated = parse(v.stdout) as Record<string, unknown>;
    const ran = (parse(r.stdout) as { items: Record<string, unknown>[] }).items[0]!;
    // Each output is in the canonical order: serializing what was parsed gives it back unchanged.
    assert.equal(formatObject(validated, 'yaml'), v.stdout);
    assert.equal(formatObject(parse(r.stdout), 'yaml'), r.stdout);
    assert.ok(v.stdout.startsWith('kind: Pod\napiVersion: v1\nmetadata:\n  name: report-job\n'), v.stdout);
    assert.ok(r.stdout.startsWith('kind: List\napiVersion: v1\nmetadata:\n  resourceVersion: ""\nitems:\n- kind: Pod\n  apiVersion: v1\n'), r.stdout);
    // The spec both print has its keys in the same order (run's has what the node added, too).
    const common = (a: object, b: object) => Object.keys(a).filter((k) => k in b);
    assert.deepEqual(common(ran.spec as object, validated.spec as object), common(validated.spec as object, ran.spec as object));
    const containers = (o: Record<string, unknown>) => keyOrders((o.spec as { containers: unknown }).containers);
    assert.deepEqual(containers(ran), containers(validated));
    assert.ok(Object.keys(ran).join(',').startsWith('kind,apiVersion,metadata,spec,status'));
  } finally {
    await tmp.remove();
  }
});
