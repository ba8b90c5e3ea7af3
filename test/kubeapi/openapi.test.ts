// /openapi/v2 and /openapi/v3 over HTTP: cut to the resource table's kinds (a table of two rows gets
// their paths and the definitions they reach, nothing else), the v2 document in JSON and in gnostic's
// protobuf, and kube-openapi's caching answers (quoted SHA-512 ETag, 304, Vary, the v3 root's hashed
// URLs, immutable caching for the current hash and a 301 for a stale one).

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type * as Protobuf from 'protobufjs';
import { configMaps } from '../../src/kubeapi/kinds/config.js';
import { deployments } from '../../src/kubeapi/kinds/workloads.js';
import { schemaV3 } from '../../src/kubeapi/openapi.js';
import { startApiServer, type ApiServer } from './harness.js';
import { MemoryBackend } from './memory-backend.js';

let api: ApiServer;
before(async () => {
  api = await startApiServer(new MemoryBackend(), { resources: [configMaps, deployments] });
});
after(() => api.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers, redirect: 'manual' });

test('/openapi/v2 holds the served kinds only, and the definitions their paths reach', async () => {
  const r = await get('/openapi/v2', { accept: 'application/json' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.match(r.headers.get('vary') ?? '', /Accept/);
  const doc = (await r.json()) as { swagger: string; paths: Record<string, any>; definitions: Record<string, any> };
  assert.equal(doc.swagger, '2.0');
  const paths = Object.keys(doc.paths);
  assert.ok(paths.includes('/apis/apps/v1/namespaces/{namespace}/deployments/{name}'));
  assert.ok(paths.includes('/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'));
  assert.ok(paths.includes('/api/v1/namespaces/{namespace}/configmaps'));
  assert.ok(paths.includes('/apis/apps/v1/watch/deployments'));
  assert.ok(!paths.some((p) => p.includes('/pods') || p.includes('replicasets') || p.startsWith('/apis/batch')), paths.join('\n'));
  const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
  assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'apps', kind: 'Deployment', version: 'v1' });
  assert.ok(patch.parameters.some((p: { name?: string }) => p.name === 'fieldValidation'));
  assert.ok(doc.definitions['io.k8s.api.apps.v1.DeploymentStrategy']);
  assert.ok(doc.definitions['io.k8s.api.core.v1.PodSpec'], 'reached through the Deployment');
  assert.ok(!doc.definitions['io.k8s.api.apps.v1.ReplicaSet']);
  assert.ok(!doc.definitions['io.k8s.api.batch.v1.Job']);
});

test('/openapi/v2 in protobuf is the same document as gnostic encodes it, with the same ETag', async () => {
  const json = await get('/openapi/v2', { accept: 'application/json' });
  const r = await get('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'accept-encoding': 'gzip' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.equal(r.headers.get('etag'), json.headers.get('etag'));
  const protobufjs = createRequire(import.meta.url)('protobufjs') as typeof Protobuf;
  const root = new protobufjs.Root().loadSync(
    new URL('../../../src/http/proto/github.com/google/gnostic/openapiv2/OpenAPIv2.proto', import.meta.url).pathname,
    {
      keepCase: true,
    },
  );
  const Document = root.lookupType('openapi.v2.Document');
  const doc = Document.toObject(Document.decode(Buffer.from(await r.arrayBuffer()))) as any;
  const jsonDoc = (await json.json()) as { definitions: Record<string, unknown>; paths: Record<string, unknown> };
  assert.equal(doc.swagger, '2.0');
  assert.equal(doc.definitions.additional_properties.length, Object.keys(jsonDoc.definitions).length);
  assert.equal(doc.paths.path.length, Object.keys(jsonDoc.paths).length);
  const strategy = doc.definitions.additional_properties.find((d: any) => d.name === 'io.k8s.api.apps.v1.DeploymentSpec').value;
  const prop = strategy.properties.additional_properties.find((p: any) => p.name === 'strategy').value;
  assert.equal(prop._ref, '#/definitions/io.k8s.api.apps.v1.DeploymentStrategy');
  assert.deepEqual(
    prop.vendor_extension.map((e: any) => [e.name, JSON.parse(e.value.yaml)]),
    [['x-kubernetes-patch-strategy', 'retainKeys']],
  );
  const deployment = doc.definitions.additional_properties.find((d: any) => d.name === 'io.k8s.api.apps.v1.Deployment').value;
  assert.deepEqual(deployment.type.value, ['object']);
});

test('/openapi/v2 caching: a quoted SHA-512 ETag, 304 for it, gzip when taken, 406 for other types', async () => {
  const r = await get('/openapi/v2', { accept: 'application/json', 'accept-encoding': 'gzip' });
  const etag = r.headers.get('etag') ?? '';
  assert.match(etag, /^"[0-9A-F]{128}"$/);
  assert.ok(r.headers.get('last-modified'));
  await r.arrayBuffer();
  const again = await get('/openapi/v2', { accept: 'application/json', 'if-none-match': etag });
  assert.equal(again.status, 304);
  const gz = await fetch(`${api.url}/openapi/v2`, { headers: { accept: 'application/json', 'accept-encoding': 'gzip' } });
  assert.equal(gz.status, 200);
  assert.equal((await get('/openapi/v2', { accept: 'text/html' })).status, 406);
});

test('/openapi/v3 lists each served group/version with its hash; the hashed URL is immutable, a stale one redirects', async () => {
  const root = await get('/openapi/v3');
  assert.equal(root.status, 200);
  assert.match(root.headers.get('etag') ?? '', /^"[0-9A-F]{128}"$/);
  const { paths } = (await root.json()) as { paths: Record<string, { serverRelativeURL: string }> };
  assert.deepEqual(Object.keys(paths).sort(), ['api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'version']);
  const url = paths['apis/apps/v1']!.serverRelativeURL;
  assert.match(url, /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);

  const r = await get(url, { accept: 'application/json' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('cache-control'), 'public, immutable');
  assert.ok(r.headers.get('expires'));
  assert.match(r.headers.get('vary') ?? '', /Accept/);
  const doc = (await r.json()) as { openapi: string; paths: Record<string, any>; components: { schemas: Record<string, any> } };
  assert.equal(doc.openapi, '3.0.0');
  assert.ok(Object.keys(doc.paths).every((p) => p.startsWith('/apis/apps/v1/')));
  const spec = doc.components.schemas['io.k8s.api.apps.v1.DeploymentSpec'];
  assert.deepEqual(spec.properties.strategy.allOf, [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy' }]);
  assert.ok(doc.components.schemas['io.k8s.api.core.v1.PodSpec']);
  const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
  assert.ok(patch.requestBody.content['application/strategic-merge-patch+json']);
  assert.deepEqual(patch.parameters.find((p: any) => p.name === 'fieldValidation').schema, { type: 'string', uniqueItems: true });

  const stale = await get('/openapi/v3/apis/apps/v1?hash=00', { accept: 'application/json' });
  assert.equal(stale.status, 301);
  assert.equal(stale.headers.get('location'), url);
  const plain = await get('/openapi/v3/apis/apps/v1');
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.get('cache-control'), null);
  assert.equal((await get('/openapi/v3/apis/batch/v1')).status, 404);
});

test('a $ref with siblings becomes allOf in v3; one without stays', () => {
  assert.deepEqual(schemaV3({ $ref: '#/definitions/A', description: 'd' }), { allOf: [{ $ref: '#/components/schemas/A' }], description: 'd' });
  assert.deepEqual(schemaV3({ items: { $ref: '#/definitions/B' }, type: 'array' }), { items: { $ref: '#/components/schemas/B' }, type: 'array' });
});
