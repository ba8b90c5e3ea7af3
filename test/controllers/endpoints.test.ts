// The endpoints and endpointslice controllers on a real `podvisor agent`: a Service's Endpoints list
// its Ready pods in addresses and the others in notReadyAddresses, with the named targetPort
// resolved per pod and a targetRef; the EndpointSlice carries ready/serving/terminating; both follow
// a readiness change within a second of the pod's Ready condition; publishNotReadyAddresses; and
// both go with the Service.

import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { call } from '../agent/helpers.js';
import { webPod } from '../proxy/service-pods.js';

let dir: { path: string; remove(): Promise<void> };
let sock: string;
let agent: CliProcess | undefined;

before(async () => {
  dir = await tempDir();
  const root = join(dir.path, 'root');
  sock = join(root, 'podvisor.sock');
  agent = startCli(['agent', '--root-dir', root]);
  await agent.waitFor('stderr', /podvisor agent started/);
});

after(async () => {
  if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent?.exited;
  await dir.remove();
});

type Addr = { ip: string; targetRef: { name: string } };
type Subset = { addresses?: Addr[]; notReadyAddresses?: Addr[]; ports: Array<{ name: string; port: number }> };

async function endpoints(name: string): Promise<Subset[] | undefined> {
  const r = await call(sock, 'GET', `/api/v1/namespaces/default/endpoints/${name}`);
  return r.status === 200 ? (r.json().subsets ?? []) : undefined;
}

/** `pod:port` of each address of a kind, sorted. */
function listed(subsets: Subset[] | undefined, field: 'addresses' | 'notReadyAddresses'): string[] {
  return (subsets ?? []).flatMap((s) => (s[field] ?? []).flatMap((a) => s.ports.map((p) => `${a.targetRef.name}:${p.port}`))).sort();
}

async function podReadyAt(name: string, ready: boolean): Promise<void> {
  await waitFor(`pod ${name} Ready=${ready}`, async () => {
    const p = (await call(sock, 'GET', `/api/v1/namespaces/default/pods/${name}`)).json();
    return (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === (ready ? 'True' : 'False'));
  });
}

test('Endpoints and EndpointSlices list Ready pods, follow readiness, resolve named ports per pod', async () => {
  const flags = dir.path;
  writeFileSync(join(flags, 'ep-a.ready'), '');
  for (const [name, port] of [
    ['ep-a', 18431],
    ['ep-b', 18432],
  ] as const) {
    const r = await call(sock, 'POST', '/api/v1/namespaces/default/pods', webPod(name, port, flags, { app: 'ep' }));
    assert.equal(r.status, 201, r.body);
  }
  let r = await call(sock, 'POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'ep' },
    spec: { selector: { app: 'ep' }, ports: [{ name: 'web', port: 80, targetPort: 'http' }] },
  });
  assert.equal(r.status, 201, r.body);

  await waitFor('ep-a ready and ep-b not ready in the Endpoints', async () => {
    const s = await endpoints('ep');
    return listed(s, 'addresses').join() === 'ep-a:18431' && listed(s, 'notReadyAddresses').join() === 'ep-b:18432';
  });
  const subsets = (await endpoints('ep'))!;
  const a = subsets.flatMap((s) => s.addresses ?? [])[0]!;
  assert.equal(a.ip, '127.0.0.1');
  assert.deepEqual(Object.keys(a.targetRef).sort(), ['kind', 'name', 'namespace', 'uid']);
  assert.equal(subsets.find((s) => s.addresses)!.ports[0]!.name, 'web');

  // The slices are written by their own controller: awaited, not read the moment the Endpoints are.
  type Slice = { addressType: string; endpoints: Array<{ targetRef: { name: string }; conditions: Record<string, boolean> }> };
  const expected = {
    'ep-a': { ready: true, serving: true, terminating: false },
    'ep-b': { ready: false, serving: false, terminating: false },
  };
  const conditionsOf = (slices: Slice[]) => Object.fromEntries(slices.flatMap((s) => s.endpoints.map((e) => [e.targetRef.name, e.conditions])));
  let slices: Slice[] = [];
  await waitFor('the EndpointSlices with ep-a ready and ep-b not', async () => {
    r = await call(sock, 'GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dep');
    assert.equal(r.status, 200, r.body);
    slices = r.json().items as Slice[];
    return isDeepStrictEqual(conditionsOf(slices), expected);
  });
  assert.equal(slices.length, 2, 'one slice per set of resolved ports');
  assert.deepEqual(conditionsOf(slices), expected);
  assert.ok(slices.every((s) => s.addressType === 'IPv4'));

  // Readiness flips: the Endpoints follow within a second of the pod's Ready condition.
  writeFileSync(join(flags, 'ep-b.ready'), '');
  rmSync(join(flags, 'ep-a.ready'));
  await podReadyAt('ep-b', true);
  await waitFor('ep-b in addresses', async () => listed(await endpoints('ep'), 'addresses').includes('ep-b:18432'), 1000);
  await podReadyAt('ep-a', false);
  await waitFor('ep-a in notReadyAddresses', async () => listed(await endpoints('ep'), 'notReadyAddresses').join() === 'ep-a:18431', 1000);

  // publishNotReadyAddresses lists every pod as an address.
  const svc = (await call(sock, 'GET', '/api/v1/namespaces/default/services/ep')).json();
  r = await call(sock, 'PUT', '/api/v1/namespaces/default/services/ep', { ...svc, spec: { ...svc.spec, publishNotReadyAddresses: true } });
  assert.equal(r.status, 200, r.body);
  await waitFor('both pods in addresses', async () => listed(await endpoints('ep'), 'addresses').join() === 'ep-a:18431,ep-b:18432');

  r = await call(sock, 'DELETE', '/api/v1/namespaces/default/services/ep');
  assert.equal(r.status, 200, r.body);
  await waitFor('Endpoints and slices gone with the Service', async () => {
    // The kubernetes Service's slice (the API's own endpoint) stays.
    const slicesLeft = (await call(sock, 'GET', '/apis/discovery.k8s.io/v1/endpointslices'))
      .json()
      .items.filter((x: { metadata: { name: string } }) => x.metadata.name !== 'kubernetes').length;
    return (await endpoints('ep')) === undefined && slicesLeft === 0;
  });
  for (const name of ['ep-a', 'ep-b']) await call(sock, 'DELETE', `/api/v1/namespaces/default/pods/${name}`);
});
