// The generic registry over a kind the project does not serve: one table row (a namespaced Widget in
// group example.com with status and scale subresources, a field selector and merge keys) over an
// in-memory storage gets discovery, CRUD, selectors, the patch types, scale, status, preconditions,
// propagationPolicy, deletecollection and watches with bookmarks, with no code of its own.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeObject, ListResult, Storage, Watch, WatchEvent } from '../../src/kubeapi/backend.js';
import { mergeSchema } from '../../src/kubeapi/patch.js';
import { resource } from '../../src/kubeapi/resource-def.js';
import { resourceTable } from '../../src/kubeapi/resource-table.js';
import { alreadyExists, conflict, notFound, staleObject } from '../../src/http/status.js';
import { startApiServer, type ApiServer } from './harness.js';
import { MemoryBackend } from './memory-backend.js';

type Widget = KubeObject & {
  spec?: { color?: string; replicas?: number; parts?: Array<{ name: string; size?: number }> };
  status?: { replicas?: number; selector?: string };
};

/** Objects by namespace/name with resourceVersions and watchers: the least a Storage needs. */
class WidgetStore implements Storage<Widget> {
  private rv = 1;
  private readonly items = new Map<string, Widget>();
  private readonly watchers = new Set<(ev: WatchEvent<Widget>) => void>();

  private key(ns: string, name: string): string {
    return `${ns}/${name}`;
  }

  private emit(type: WatchEvent<Widget>['type'], object: Widget): void {
    for (const w of this.watchers) w({ type, object: structuredClone(object) });
  }

  list(): ListResult<Widget> {
    return { items: [...this.items.values()].map((w) => structuredClone(w)), resourceVersion: String(this.rv) };
  }

  get(ns: string, name: string): Widget | undefined {
    const w = this.items.get(this.key(ns, name));
    return w && structuredClone(w);
  }

  async create(obj: Widget): Promise<Widget> {
    const { namespace = '', name = '' } = obj.metadata ?? {};
    if (this.items.has(this.key(namespace, name))) throw alreadyExists('widgets', name);
    const w: Widget = { ...structuredClone(obj), metadata: { ...obj.metadata, uid: `uid-${name}`, resourceVersion: String(++this.rv) } };
    this.items.set(this.key(namespace, name), w);
    this.emit('ADDED', w);
    return structuredClone(w);
  }

  private replace(obj: Widget, keep: (next: Widget, cur: Widget) => Widget): Widget {
    const { namespace = '', name = '' } = obj.metadata ?? {};
    const cur = this.items.get(this.key(namespace, name));
    if (!cur) throw notFound('widgets', name);
    if (obj.metadata?.resourceVersion && obj.metadata.resourceVersion !== cur.metadata?.resourceVersion) throw conflict('widgets', name, staleObject);
    const w = keep(structuredClone(obj), cur);
    w.metadata = { ...w.metadata, uid: cur.metadata?.uid, resourceVersion: String(++this.rv) };
    this.items.set(this.key(namespace, name), w);
    this.emit('MODIFIED', w);
    return structuredClone(w);
  }

  async update(obj: Widget): Promise<Widget> {
    return this.replace(obj, (next, cur) => ({ ...next, status: cur.status }));
  }

  async updateStatus(obj: Widget): Promise<Widget> {
    return this.replace(obj, (next, cur) => ({ ...cur, status: next.status }));
  }

  async delete(ns: string, name: string): Promise<Widget> {
    const cur = this.items.get(this.key(ns, name));
    if (!cur) throw notFound('widgets', name);
    this.items.delete(this.key(ns, name));
    this.emit('DELETED', cur);
    return structuredClone(cur);
  }

  watch(resourceVersion: string, onEvent: (ev: WatchEvent<Widget>) => void): Watch {
    if (resourceVersion === '' || resourceVersion === '0') for (const object of this.list().items) onEvent({ type: 'ADDED', object });
    this.watchers.add(onEvent);
    return { stop: () => void this.watchers.delete(onEvent) };
  }
}

const store = new WidgetStore();

const widgets = resource<Widget>({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  resource: 'widgets',
  singular: 'widget',
  shortNames: ['wd'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: () => store,
  fieldSelectors: { 'spec.color': (w) => w.spec?.color ?? '' },
  mergeSchema: mergeSchema({ 'spec.parts': 'name' }),
  status: ['get', 'patch', 'update'],
  scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: 'status.selector' },
});

describe('generic registry: a kind that is one table row', () => {
  let api: ApiServer;
  const base = '/apis/example.com/v1/namespaces/default/widgets';

  async function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ code: number; body: any; text: string }> {
    const res = await fetch(api.url + path, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'Content-Type': contentType } } : {}),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { code: res.status, body: parsed, text };
  }

  before(async () => {
    api = await startApiServer(new MemoryBackend(), { resources: [...resourceTable, widgets], bookmarkMs: 50 });
  });
  after(async () => {
    await api.close();
  });

  test('discovery lists the group, the resource and its subresources', async () => {
    const groups = await call('GET', '/apis');
    assert.deepEqual(
      groups.body.groups.map((g: { name: string }) => g.name),
      [
        'metrics.k8s.io',
        'apps',
        'batch',
        'discovery.k8s.io',
        'coordination.k8s.io',
        'policy',
        'rbac.authorization.k8s.io',
        'authorization.k8s.io',
        'authentication.k8s.io',
        'networking.k8s.io',
        'storage.k8s.io',
        'scheduling.k8s.io',
        'autoscaling',
        'node.k8s.io',
        'apiextensions.k8s.io',
        'example.com',
      ],
    );
    const group = await call('GET', '/apis/example.com');
    assert.equal(group.body.preferredVersion.groupVersion, 'example.com/v1');
    const list = await call('GET', '/apis/example.com/v1');
    assert.equal(list.body.groupVersion, 'example.com/v1');
    const byName = Object.fromEntries(list.body.resources.map((r: { name: string }) => [r.name, r]));
    assert.deepEqual(Object.keys(byName), ['widgets', 'widgets/scale', 'widgets/status']);
    assert.deepEqual(byName.widgets.shortNames, ['wd']);
    assert.equal(byName['widgets/scale'].kind, 'Scale');
    assert.equal(byName['widgets/scale'].group, 'autoscaling');
    assert.deepEqual(byName['widgets/status'].verbs, ['get', 'patch', 'update']);
    assert.equal((await call('GET', '/apis/example.com/v2')).code, 404);
    const core = await call('GET', '/api/v1');
    const pods = core.body.resources.find((r: { name: string }) => r.name === 'pods');
    assert.ok(pods.verbs.includes('deletecollection'));
    assert.deepEqual(
      core.body.resources.filter((r: { name: string }) => r.name.startsWith('pods/')).map((r: { name: string }) => r.name),
      ['pods/attach', 'pods/eviction', 'pods/exec', 'pods/log', 'pods/portforward', 'pods/status'],
    );
  });

  test('create, get, list with label and field selectors, update', async () => {
    const created = await call('POST', base, {
      metadata: { name: 'a', labels: { tier: 'web' } },
      spec: { color: 'red', replicas: 1, parts: [{ name: 'x', size: 1 }] },
    });
    assert.equal(created.code, 201, created.text);
    assert.equal(created.body.apiVersion, 'example.com/v1');
    assert.equal(created.body.kind, 'Widget');
    assert.equal(created.body.metadata.namespace, 'default');
    assert.equal((await call('POST', base, { metadata: { name: 'a' } })).code, 409);
    await call('POST', base, { metadata: { name: 'b', labels: { tier: 'db' } }, spec: { color: 'blue' } });
    const wrongKind = await call('POST', base, { kind: 'Pod', metadata: { name: 'c' } });
    assert.equal(wrongKind.code, 400);

    const got = await call('GET', `${base}/a`);
    assert.equal(got.body.spec.color, 'red');
    const missing = await call('GET', `${base}/zz`);
    assert.equal(missing.code, 404);
    assert.equal(missing.body.message, 'widgets.example.com "zz" not found');

    const names = async (q: string) => (await call('GET', `${base}?${q}`)).body.items.map((w: Widget) => w.metadata?.name);
    assert.deepEqual(await names('labelSelector=tier%3Dweb'), ['a']);
    assert.deepEqual(await names('fieldSelector=spec.color%3Dblue'), ['b']);
    assert.deepEqual(await names('fieldSelector=metadata.name!%3Da'), ['b']);
    const badField = await call('GET', `${base}?fieldSelector=spec.size%3D1`);
    assert.equal(badField.code, 400);
    assert.match(badField.body.message, /"spec.size" is not a known field selector: only "metadata.name", "metadata.namespace", "spec.color"/);
    const across = await call('GET', '/apis/example.com/v1/widgets');
    assert.equal(across.body.kind, 'WidgetList');
    assert.equal(across.body.items.length, 2);
    assert.equal((await call('POST', '/apis/example.com/v1/widgets', { metadata: { name: 'q' } })).code, 405);

    const updated = await call('PUT', `${base}/a`, { ...got.body, spec: { ...got.body.spec, color: 'green' } });
    assert.equal(updated.code, 200, updated.text);
    assert.equal(updated.body.spec.color, 'green');
    const stale = await call('PUT', `${base}/a`, got.body);
    assert.equal(stale.code, 409);
    assert.equal(stale.body.reason, 'Conflict');
  });

  test("patches: strategic merge by the row's merge keys, merge patch, JSON patch", async () => {
    const smp = await call('PATCH', `${base}/a`, { spec: { parts: [{ name: 'y', size: 2 }] } }, 'application/strategic-merge-patch+json');
    assert.equal(smp.code, 200, smp.text);
    assert.deepEqual(
      smp.body.spec.parts.map((p: { name: string }) => p.name),
      ['x', 'y'],
    );
    const merge = await call('PATCH', `${base}/a`, { spec: { parts: [{ name: 'z' }] } }, 'application/merge-patch+json');
    assert.deepEqual(merge.body.spec.parts, [{ name: 'z' }]);
    const json = await call('PATCH', `${base}/a`, [{ op: 'replace', path: '/spec/color', value: 'black' }], 'application/json-patch+json');
    assert.equal(json.body.spec.color, 'black');
    const unsupported = await call('PATCH', `${base}/a`, {}, 'text/plain');
    assert.equal(unsupported.code, 415);
  });

  test('status and scale subresources', async () => {
    const status = await call('PUT', `${base}/a/status`, {
      metadata: { name: 'a' },
      spec: { color: 'ignored' },
      status: { replicas: 1, selector: 'tier=web' },
    });
    assert.equal(status.code, 200, status.text);
    assert.equal(status.body.status.replicas, 1);
    assert.equal(status.body.spec.color, 'black');

    const scale = await call('GET', `${base}/a/scale`);
    assert.equal(scale.body.kind, 'Scale');
    assert.equal(scale.body.apiVersion, 'autoscaling/v1');
    assert.deepEqual(scale.body.spec, { replicas: 1 });
    assert.deepEqual(scale.body.status, { replicas: 1, selector: 'tier=web' });

    const put = await call('PUT', `${base}/a/scale`, { ...scale.body, spec: { replicas: 3 } });
    assert.equal(put.code, 200, put.text);
    assert.equal(put.body.spec.replicas, 3);
    assert.equal((await call('GET', `${base}/a`)).body.spec.replicas, 3);
    const patched = await call('PATCH', `${base}/a/scale`, { spec: { replicas: 5 } }, 'application/merge-patch+json');
    assert.equal(patched.body.spec.replicas, 5);
    const negative = await call('PUT', `${base}/a/scale`, { spec: { replicas: -1 } });
    assert.equal(negative.code, 422);
    assert.equal(negative.body.message, 'Scale.autoscaling "a" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    assert.equal((await call('GET', `${base}/a/nothing`)).code, 404);
  });

  test('watch: events, bookmarks and timeoutSeconds', async () => {
    const res = await fetch(`${api.url}${base}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&labelSelector=tier%3Dweb`);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: Widget });
    assert.equal(lines[0]!.type, 'ADDED');
    assert.equal(lines[0]!.object.metadata?.name, 'a');
    assert.equal(lines[0]!.object.kind, 'Widget');
    const bookmark = lines.find((l) => l.type === 'BOOKMARK');
    assert.ok(bookmark, 'a bookmark within the second the watch lasts');
    assert.equal(bookmark.object.apiVersion, 'example.com/v1');
    assert.ok(!lines.some((l) => l.object.metadata?.name === 'b'), 'the label selector holds for the watch');
  });

  test('delete: preconditions, propagationPolicy, Status; deletecollection by selector', async () => {
    const a = (await call('GET', `${base}/a`)).body as Widget;
    const wrongUid = await call('DELETE', `${base}/a`, { preconditions: { uid: 'other' } });
    assert.equal(wrongUid.code, 409);
    assert.match(wrongUid.body.message, /Precondition failed: UID in precondition: other, UID in object meta: uid-a/);
    const staleRV = await call('DELETE', `${base}/a`, { preconditions: { resourceVersion: '1' } });
    assert.equal(staleRV.code, 409);
    const badPolicy = await call('DELETE', `${base}/a?propagationPolicy=Sometimes`);
    assert.equal(badPolicy.code, 400);
    const deleted = await call('DELETE', `${base}/a?propagationPolicy=Background`, {
      preconditions: { uid: a.metadata?.uid, resourceVersion: a.metadata?.resourceVersion },
    });
    assert.equal(deleted.code, 200, deleted.text);
    assert.equal(deleted.body.kind, 'Status');
    assert.equal(deleted.body.status, 'Success');
    assert.deepEqual(deleted.body.details, { name: 'a', group: 'example.com', kind: 'widgets', uid: 'uid-a' });

    await call('POST', base, { metadata: { name: 'c', labels: { tier: 'db' } } });
    await call('POST', base, { metadata: { name: 'd', labels: { tier: 'web' } } });
    const collection = await call('DELETE', `${base}?labelSelector=tier%3Ddb`);
    assert.equal(collection.code, 200, collection.text);
    assert.deepEqual(collection.body.items.map((w: Widget) => w.metadata?.name).sort(), ['b', 'c']);
    assert.deepEqual(
      (await call('GET', base)).body.items.map((w: Widget) => w.metadata?.name),
      ['d'],
    );
  });

  test('scope: a namespaced kind has no cluster-wide objects; unknown paths are 404 Status', async () => {
    assert.equal((await call('GET', '/apis/example.com/v1/widgets/d')).code, 404);
    assert.equal((await call('GET', '/api/v1/namespaces/default/widgets')).code, 404);
    const unknown = await call('GET', '/api/v1/namespaces/default/pods/a/b/c');
    assert.equal(unknown.code, 404);
    assert.equal(unknown.body.kind, 'Status');
    const ns = await call('GET', '/api/v1/namespaces/default/status');
    assert.equal(ns.code, 404);
    assert.equal((await call('PUT', '/api/v1/namespaces/default')).code, 405);
  });
});
