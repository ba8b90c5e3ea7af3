// Aggregated discovery (apidiscovery.k8s.io v2 and v2beta1) on /api and /apis beside the legacy
// documents, from the resource table: its shape and headers over HTTP, and kubectl 1.32's
// `api-resources`, which reads it and then asks for no group/version document; kubectl 1.20, which
// knows only the legacy documents, lists the same resources.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { kubectl132Path, kubectlMinor, kubectlPath, runKubectl, startApiServer, type ApiServer } from './harness.js';
import { MemoryBackend } from './memory-backend.js';

let api: ApiServer;
before(async () => {
  api = await startApiServer(new MemoryBackend());
});
after(() => api.close());

const v2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const v2beta1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const get = (path: string, accept: string, extra: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers: { accept, ...extra } });

test('/apis answers an APIGroupDiscoveryList for the aggregated media type, with Vary, Content-Type and ETag as upstream', async () => {
  const r = await get('/apis', `${v2},application/json`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), v2);
  assert.equal(r.headers.get('vary'), 'Accept');
  const etag = r.headers.get('etag') ?? '';
  assert.match(etag, /^"[0-9A-F]{128}"$/);
  const doc = (await r.json()) as any;
  assert.equal(doc.kind, 'APIGroupDiscoveryList');
  assert.equal(doc.apiVersion, 'apidiscovery.k8s.io/v2');
  const apps = doc.items.find((g: any) => g.metadata.name === 'apps');
  assert.equal(apps.versions[0].version, 'v1');
  assert.equal(apps.versions[0].freshness, 'Current');
  const deployments = apps.versions[0].resources.find((x: any) => x.resource === 'deployments');
  assert.deepEqual(
    { ...deployments, subresources: undefined },
    {
      resource: 'deployments',
      responseKind: { group: '', version: '', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: undefined,
    },
  );
  assert.deepEqual(
    deployments.subresources.find((s: any) => s.subresource === 'scale'),
    { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
  );
  assert.equal((await get('/apis', v2, { 'if-none-match': etag })).status, 304);
});

test('/api answers the core group for v2beta1; a legacy Accept gets the legacy documents', async () => {
  const r = await get('/api', v2beta1);
  assert.equal(r.headers.get('content-type'), v2beta1);
  const doc = (await r.json()) as any;
  assert.equal(doc.apiVersion, 'apidiscovery.k8s.io/v2beta1');
  assert.equal(doc.items.length, 1);
  assert.deepEqual(doc.items[0].metadata, { creationTimestamp: null });
  const pods = doc.items[0].versions[0].resources.find((x: any) => x.resource === 'pods');
  assert.equal(pods.scope, 'Namespaced');
  assert.ok(pods.subresources.some((s: any) => s.subresource === 'log'));
  const legacy = await get('/api', 'application/json');
  assert.equal(legacy.headers.get('content-type'), 'application/json');
  assert.equal(legacy.headers.get('vary'), 'Accept');
  assert.equal(((await legacy.json()) as { kind: string }).kind, 'APIVersions');
  const first = await get('/apis', `application/json,${v2}`);
  assert.equal(((await first.json()) as { kind: string }).kind, 'APIGroupList');
});

test(
  'kubectl 1.32 api-resources reads aggregated discovery and needs no group/version document',
  { skip: kubectl132Path ? false : 'no kubectl 1.32' },
  async () => {
    const r = await runKubectl(kubectl132Path!, api, ['api-resources', '-v=6']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^deployments +deploy +apps\/v1 +true +Deployment$/m);
    assert.match(r.stdout, /^pods +po +v1 +true +Pod$/m);
    assert.match(r.stderr, /GET http:\/\/127\.0\.0\.1:\d+\/apis\?timeout=\S+ 200 OK/);
    assert.doesNotMatch(r.stderr, /GET \S+\/apis\/apps\/v1\?/);
  },
);

const kubectl120 = process.env.KUBECTL120 || (kubectlMinor === 20 ? kubectlPath : undefined);
test('kubectl 1.20 api-resources reads the legacy documents', { skip: kubectl120 ? false : 'no kubectl 1.20' }, async () => {
  const r = await runKubectl(kubectl120!, api, ['api-resources']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^deployments +deploy +apps\/v1 +true +Deployment$/m);
});
