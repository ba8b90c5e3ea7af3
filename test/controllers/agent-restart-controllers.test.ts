// A restarted `podvisor agent` takes its controllers up where they were: they begin once the kept
// pods are known (client-go's WaitForCacheSync), so a ReplicaSet neither creates its replicas again
// nor deletes any, and a Service's Endpoints are not rewritten (an empty write would send its clients
// nowhere until the pods came back).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startCli, stopRuntimeServices, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { call } from '../agent/helpers.js';

let dir: { path: string; remove(): Promise<void> };
let agent: CliProcess | undefined;
const root = () => join(dir.path, 'root');
const sock = () => join(root(), 'podvisor.sock');

async function startAgent(): Promise<CliProcess> {
  const p = startCli(['agent', '--root-dir', root()]);
  await p.waitFor('stderr', /podvisor agent started/, 60_000);
  return p;
}

async function stopAgent(): Promise<void> {
  if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent?.exited;
  agent = undefined;
}

before(async () => {
  dir = await tempDir();
  agent = await startAgent();
});

after(async () => {
  await stopAgent();
  await stopRuntimeServices(dir.path);
  await dir.remove();
});

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox', command: ['sleep', '600'] }] },
    },
  },
};

const service = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
});

interface PodView {
  name: string;
  running: boolean;
  deleting: boolean;
}

async function pods(): Promise<PodView[]> {
  const r = await call(sock(), 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb');
  assert.equal(r.status, 200, r.body);
  return (r.json().items as Array<{ metadata: { name: string; deletionTimestamp?: string }; status?: { phase?: string } }>).map((p) => ({
    name: p.metadata.name,
    running: p.status?.phase === 'Running',
    deleting: Boolean(p.metadata.deletionTimestamp),
  }));
}

async function endpoints(name: string): Promise<{ rv: string; addresses: number } | undefined> {
  const r = await call(sock(), 'GET', `/api/v1/namespaces/default/endpoints/${name}`);
  if (r.status !== 200) return undefined;
  const ep = r.json() as { metadata: { resourceVersion: string }; subsets?: Array<{ addresses?: unknown[] }> };
  return { rv: ep.metadata.resourceVersion, addresses: (ep.subsets ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0), 0) };
}

const reasons = async (reason: string): Promise<string[]> => {
  const r = await call(sock(), 'GET', `/api/v1/namespaces/default/events?fieldSelector=reason%3D${reason}`);
  assert.equal(r.status, 200, r.body);
  return (r.json().items as Array<{ message: string }>).map((e) => e.message);
};

test('after a restart the ReplicaSet keeps its pods and the Endpoints are not rewritten', async () => {
  for (const [path, body] of [
    ['/apis/apps/v1/namespaces/default/deployments', deployment],
    ['/api/v1/namespaces/default/services', service('web')],
  ] as const) {
    const r = await call(sock(), 'POST', path, body);
    assert.equal(r.status, 201, r.body);
  }
  const before = await waitFor('two pods running', async () => {
    const p = await pods();
    return p.length === 2 && p.every((x) => x.running) ? p.map((x) => x.name).sort() : undefined;
  });
  const epBefore = await waitFor('the Endpoints list both pods', async () => {
    const ep = await endpoints('web');
    return ep?.addresses === 2 ? ep : undefined;
  });

  await stopAgent();
  agent = await startAgent();

  // A second Service over the same pods: the endpoints controller takes its keys in order, so once
  // this one is written, whatever the restart made it do to `web` is written too.
  const r = await call(sock(), 'POST', '/api/v1/namespaces/default/services', service('marker'));
  assert.equal(r.status, 201, r.body);
  await waitFor('the new Service lists both pods', async () => (await endpoints('marker'))?.addresses === 2);
  assert.deepEqual(await endpoints('web'), epBefore, 'the Endpoints of web were not written again');

  // Scaled to 3 through the same queue: once the third pod exists, the ReplicaSet's start-up sync is done.
  const scaled = await call(
    sock(),
    'PATCH',
    '/apis/apps/v1/namespaces/default/deployments/web/scale',
    { spec: { replicas: 3 } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  assert.equal(scaled.status, 200, scaled.body);
  const after = await waitFor('three pods running', async () => {
    const p = await pods();
    return p.length === 3 && p.every((x) => x.running) ? p : undefined;
  });
  assert.ok(
    before.every((n) => after.some((p) => p.name === n && !p.deleting)),
    `the pods from before the restart are kept: ${after.map((p) => p.name).join(' ')}\n${agent.stderr()}`,
  );
  assert.deepEqual(await reasons('SuccessfulDelete'), [], 'the ReplicaSet deleted no pod');
  const created = (await reasons('SuccessfulCreate')).filter((m) => !before.some((n) => m.endsWith(n)));
  assert.equal(created.length, 1, `one pod created since the restart, for the scale-up: ${created.join('; ')}`);
});
