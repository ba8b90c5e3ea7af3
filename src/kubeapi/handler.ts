// The core/v1 API subset over a KubeBackend: discovery, pods (list, get, create, update, patch,
// delete, status, log), events, namespaces, watches, Tables and metrics.k8s.io PodMetrics. The
// request handler answers paths under /api, /apis, /version and /openapi and passes on the rest.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYAML } from 'yaml';
import type { Pod } from '../api/types.js';
import { typeMetaError } from '../api/decode.js';
import type { LogOptions } from '../runtime/streams.js';
import { ApiError, type KubeBackend, type KubeEvent, type KubeObject, type ObjectKind } from './backend.js';
import {
  apiGroupList,
  apiVersions,
  coreV1Resources,
  metricsApiGroup,
  metricsGroupVersion,
  metricsResources,
  openapiV2JSON,
  openapiV2Protobuf,
  serverVersion,
} from './discovery.js';
import { applyPatch, patchTypeOf } from './patch.js';
import { boolParam, intParam } from './query.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { badRequest, methodNotAllowed, notFound, notFoundPath, sendError, sendJSON, unsupportedMediaType } from './status.js';
import { eventTable, podTable, type IncludeObject } from '../printers/tables.js';
import { serveWatch } from './watch.js';
import type { Event } from '../api/types.js';

export interface KubeApiOptions {
  /** ms since epoch, for Table ages and metrics timestamps. */
  now?: () => number;
  /** How often a watch that allows bookmarks gets one (default 60 s, as the API server). */
  bookmarkMs?: number;
  /** Address clients are told to use (APIVersions.serverAddressByClientCIDRs). */
  serverAddress?: string;
}

export type KubeRequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const MAX_BODY = 3 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY}`);
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

async function readObject(req: IncomingMessage, yamlOk = false): Promise<unknown> {
  const body = (await readBody(req)).toString('utf8');
  if (body.trim() === '') return undefined;
  try {
    return yamlOk ? parseYAML(body) : JSON.parse(body);
  } catch (err) {
    throw badRequest(`the request body could not be decoded: ${(err as Error).message}`);
  }
}

/** Whether the Accept header asks for a meta.k8s.io Table. */
function wantsTable(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  for (const part of accept.split(',')) {
    const params = part.split(';').map((s) => s.trim());
    if (params.includes('as=Table') && params.some((p) => p === 'g=meta.k8s.io') && params.some((p) => p === 'v=v1' || p === 'v=v1beta1')) return true;
  }
  return false;
}

function includeObjectOf(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  if (v === 'None' || v === 'Object' || v === 'Metadata') return v;
  if (v) throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "None", "Metadata", "Object"`);
  return 'Metadata';
}

const podFields = ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP', 'status.nominatedNodeName'];
function podFieldValues(p: Pod): Record<string, string> {
  return {
    'metadata.name': p.metadata?.name ?? '',
    'metadata.namespace': p.metadata?.namespace ?? '',
    'spec.nodeName': p.spec?.nodeName ?? '',
    'spec.restartPolicy': p.spec?.restartPolicy ?? '',
    'spec.schedulerName': p.spec?.schedulerName ?? '',
    'spec.serviceAccountName': p.spec?.serviceAccountName ?? '',
    'status.phase': p.status?.phase ?? '',
    'status.podIP': p.status?.podIP ?? '',
    'status.nominatedNodeName': p.status?.nominatedNodeName ?? '',
  };
}

const eventFields = [
  'metadata.name', 'metadata.namespace', 'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
  'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type',
];
function eventFieldValues(e: KubeEvent): Record<string, string> {
  const ev = e as unknown as Event;
  const o = ev.involvedObject ?? {};
  return {
    'metadata.name': ev.metadata?.name ?? '',
    'metadata.namespace': ev.metadata?.namespace ?? '',
    'involvedObject.kind': o.kind ?? '',
    'involvedObject.namespace': o.namespace ?? '',
    'involvedObject.name': o.name ?? '',
    'involvedObject.uid': o.uid ?? '',
    'involvedObject.apiVersion': o.apiVersion ?? '',
    'involvedObject.resourceVersion': o.resourceVersion ?? '',
    'involvedObject.fieldPath': o.fieldPath ?? '',
    reason: ev.reason ?? '',
    reportingComponent: ev.reportingComponent ?? '',
    source: ev.source?.component ?? '',
    type: ev.type ?? '',
  };
}

function withKind<T extends object>(obj: T, kind: string): T {
  return { apiVersion: 'v1', kind, ...obj };
}

function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < 5; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}

function fieldValidationOf(q: URLSearchParams): 'Strict' | 'Warn' | 'Ignore' {
  const v = q.get('fieldValidation') ?? 'Strict';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got "${v}"`);
}

function dryRunOf(q: URLSearchParams): boolean {
  const v = q.getAll('dryRun');
  if (v.length === 0) return false;
  if (v.every((x) => x === 'All')) return true;
  throw badRequest(`dryRun: Unsupported value: "${v.find((x) => x !== 'All')}": supported values: "All"`);
}

/** Quantities as metrics-server writes them: nanocores and KiB. */
function cpuQuantity(cores: number): string {
  return `${Math.max(0, Math.round(cores * 1e9))}n`;
}
function memoryQuantity(bytes: number): string {
  return `${Math.max(0, Math.round(bytes / 1024))}Ki`;
}

/** The handler for a backend: resolves true when it answered, false for paths it does not own. */
export function createKubeApiHandler(backend: KubeBackend, opts: KubeApiOptions = {}): KubeRequestHandler {
  const now = opts.now ?? Date.now;
  const bookmarkMs = opts.bookmarkMs ?? 60_000;

  function podOr404(ns: string, name: string): Pod {
    const p = backend.getPod(ns, name);
    if (!p) throw notFound('pods', name);
    return p;
  }

  function selectPods(q: URLSearchParams, ns: string | undefined): (p: Pod) => boolean {
    const labels = parseLabelSelector(q.get('labelSelector'));
    const fields = parseFieldSelector(q.get('fieldSelector'), podFieldValues, podFields, 'Pod');
    return (p) => (ns === undefined || p.metadata?.namespace === ns) && labels(p.metadata?.labels ?? {}) && fields(p);
  }

  function selectEvents(q: URLSearchParams, ns: string | undefined): (e: KubeEvent) => boolean {
    const labels = parseLabelSelector(q.get('labelSelector'));
    const fields = parseFieldSelector(q.get('fieldSelector'), eventFieldValues, eventFields, 'Event');
    return (e) =>
      (ns === undefined || e.metadata.namespace === ns) &&
      labels(((e.metadata as { labels?: Record<string, string> }).labels) ?? {}) &&
      fields(e);
  }

  function listOrWatchPods(req: IncomingMessage, res: ServerResponse, q: URLSearchParams, ns: string | undefined): void {
    const match = selectPods(q, ns);
    const table = wantsTable(req);
    const include = includeObjectOf(q);
    if (boolParam(q, 'watch')) {
      let first = true;
      serveWatch<Pod>(req, res, {
        resourceVersion: q.get('resourceVersion') ?? '',
        start: (rv, on) => backend.watchPods(rv, on),
        matches: match,
        key: (p) => `${p.metadata?.namespace}/${p.metadata?.name}`,
        render: (p) => {
          if (!table) return withKind(p, 'Pod');
          const t = podTable([p], { now: now(), includeObject: include, resourceVersion: p.metadata?.resourceVersion ?? '', noColumns: !first });
          first = false;
          return t;
        },
        timeoutSeconds: intParam(q, 'timeoutSeconds'),
        bookmarkMs: boolParam(q, 'allowWatchBookmarks') ? bookmarkMs : undefined,
        bookmark: (rv) => ({ kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: rv } }),
      });
      return;
    }
    const list = backend.listPods();
    const items = list.items.filter(match);
    if (table) return sendJSON(res, 200, podTable(items, { now: now(), includeObject: include, resourceVersion: list.resourceVersion }));
    sendJSON(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: list.resourceVersion }, items: items.map((p) => withKind(p, 'Pod')) });
  }

  function listOrWatchEvents(req: IncomingMessage, res: ServerResponse, q: URLSearchParams, ns: string | undefined): void {
    const match = selectEvents(q, ns);
    const table = wantsTable(req);
    const include = includeObjectOf(q);
    if (boolParam(q, 'watch')) {
      let first = true;
      serveWatch<KubeEvent>(req, res, {
        resourceVersion: q.get('resourceVersion') ?? '',
        start: (rv, on) => backend.watchEvents(rv, on),
        matches: match,
        key: (e) => `${e.metadata.namespace}/${e.metadata.name}`,
        render: (e) => {
          if (!table) return withKind(e, 'Event');
          const t = eventTable([e as unknown as Event], { now: now(), includeObject: include, resourceVersion: e.metadata.resourceVersion ?? '', noColumns: !first });
          first = false;
          return t;
        },
        timeoutSeconds: intParam(q, 'timeoutSeconds'),
        bookmarkMs: boolParam(q, 'allowWatchBookmarks') ? bookmarkMs : undefined,
        bookmark: (rv) => ({ kind: 'Event', apiVersion: 'v1', metadata: { resourceVersion: rv } }),
      });
      return;
    }
    const list = backend.listEvents();
    const items = list.items.filter(match);
    if (table) return sendJSON(res, 200, eventTable(items as unknown as Event[], { now: now(), includeObject: include, resourceVersion: list.resourceVersion }));
    sendJSON(res, 200, { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion: list.resourceVersion }, items: items.map((e) => withKind(e, 'Event')) });
  }

  function checkBodyPod(body: unknown, ns: string, name?: string): Pod {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a Pod object');
    const typeError = typeMetaError(body as Record<string, unknown>, 'Pod');
    if (typeError) throw badRequest(typeError);
    const pod = body as Pod;
    if (pod.kind !== undefined && pod.kind !== 'Pod') throw badRequest(`the API version in the data (${pod.apiVersion}) does not match the expected API version (v1) or kind ${pod.kind} is not Pod`);
    if (pod.apiVersion !== undefined && pod.apiVersion !== 'v1') throw badRequest(`the API version in the data (${pod.apiVersion}) does not match the expected API version (v1)`);
    pod.metadata ??= {};
    if (pod.metadata.namespace && pod.metadata.namespace !== ns) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    pod.metadata.namespace = ns;
    if (name !== undefined) {
      if (pod.metadata.name && pod.metadata.name !== name) throw badRequest('the name of the object (' + pod.metadata.name + ') does not match the name on the URL (' + name + ')');
      pod.metadata.name = name;
    }
    return pod;
  }

  async function createPod(req: IncomingMessage, res: ServerResponse, q: URLSearchParams, ns: string): Promise<void> {
    const pod = checkBodyPod(await readObject(req), ns);
    if (!pod.metadata!.name && pod.metadata!.generateName) pod.metadata!.name = pod.metadata!.generateName + randomSuffix();
    const created = await backend.createPod(pod, { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) });
    sendJSON(res, 201, withKind(created, 'Pod'));
  }

  async function patchPod(req: IncomingMessage, res: ServerResponse, q: URLSearchParams, ns: string, name: string): Promise<void> {
    const type = patchTypeOf(req.headers['content-type']);
    if (!type) throw unsupportedMediaType(req.headers['content-type'] ?? '');
    const patch = await readObject(req, type === 'apply');
    if (patch === undefined) throw badRequest('the body of the request was empty');
    const current = backend.getPod(ns, name);
    if (type === 'apply') {
      if (!q.get('fieldManager')) throw badRequest('PATCH requests with apply-patch content type must have a fieldManager query parameter');
      const applied = checkBodyPod(patch, ns, name);
      if (!current) {
        const created = await backend.createPod(applied, { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) });
        return sendJSON(res, 201, withKind(created, 'Pod'));
      }
    }
    if (!current) throw notFound('pods', name);
    const next = applyPatch(type, current, patch) as Pod;
    const pod = checkBodyPod(next, ns, name);
    // A patch applies to the current object unless it names the version it was made against.
    const patchRV = (patch as { metadata?: { resourceVersion?: string } })?.metadata?.resourceVersion;
    (pod.metadata as { resourceVersion?: string }).resourceVersion = typeof patchRV === 'string' ? patchRV : current.metadata?.resourceVersion;
    const updated = await backend.updatePod(pod, { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) });
    sendJSON(res, 200, withKind(updated, 'Pod'));
  }

  async function deletePod(req: IncomingMessage, res: ServerResponse, q: URLSearchParams, ns: string, name: string): Promise<void> {
    const body = ((await readObject(req)) ?? {}) as { gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] };
    podOr404(ns, name);
    const grace = intParam(q, 'gracePeriodSeconds') ?? (typeof body.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined);
    const deleted = await backend.deletePod(ns, name, {
      ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}),
      ...(body.preconditions ? { preconditions: body.preconditions } : {}),
      dryRun: dryRunOf(q) || (Array.isArray(body.dryRun) && body.dryRun.includes('All')),
    });
    sendJSON(res, 200, withKind(deleted, 'Pod'));
  }

  async function podLog(res: ServerResponse, q: URLSearchParams, ns: string, name: string): Promise<void> {
    const pod = podOr404(ns, name);
    const names = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.name);
    let container = q.get('container') ?? '';
    if (!container) {
      const main = pod.spec?.containers ?? [];
      if (main.length !== 1) {
        throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${main.map((c) => c.name).join(' ')}]`);
      }
      container = main[0]!.name;
    } else if (!names.includes(container)) {
      throw badRequest(`container ${container} is not valid for pod ${name}`);
    }
    const lo: LogOptions = { container, follow: boolParam(q, 'follow'), previous: boolParam(q, 'previous'), timestamps: boolParam(q, 'timestamps') };
    const tail = intParam(q, 'tailLines');
    if (tail !== undefined) lo.tailLines = tail;
    const since = intParam(q, 'sinceSeconds');
    if (since !== undefined) {
      if (since < 1) throw new ApiError(422, 'Invalid', `PodLogOptions "${name}" is invalid: sinceSeconds: Invalid value: ${since}: must be greater than 0`);
      lo.sinceSeconds = since;
    }
    const sinceTime = q.get('sinceTime');
    if (sinceTime) {
      if (Number.isNaN(Date.parse(sinceTime))) throw badRequest(`sinceTime: invalid time "${sinceTime}"`);
      lo.sinceTime = sinceTime;
    }
    const limit = intParam(q, 'limitBytes');
    if (limit !== undefined) lo.limitBytes = limit;
    const stream = await backend.podLog(ns, name, lo);
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const stop = () => stream.destroy();
    res.on('close', stop);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  }

  function podMetrics(p: Pod): unknown | undefined {
    const ns = p.metadata?.namespace ?? 'default';
    const name = p.metadata?.name ?? '';
    const m = backend.podMetrics(ns, name);
    if (!m) return undefined;
    return {
      kind: 'PodMetrics',
      apiVersion: metricsGroupVersion,
      metadata: { name, namespace: ns, creationTimestamp: new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z'), labels: p.metadata?.labels ?? {} },
      timestamp: m.timestamp,
      window: m.window,
      containers: m.containers.map((c) => ({ name: c.name, usage: { cpu: cpuQuantity(c.cpuCores), memory: memoryQuantity(c.memoryBytes) } })),
    };
  }

  function metricsList(res: ServerResponse, q: URLSearchParams, ns: string | undefined): void {
    const match = selectPods(q, ns);
    const items = backend.listPods().items.filter(match).map(podMetrics).filter((x) => x !== undefined);
    sendJSON(res, 200, { kind: 'PodMetricsList', apiVersion: metricsGroupVersion, metadata: {}, items });
  }

  function namespaceObject(name: string): unknown {
    return { kind: 'Namespace', apiVersion: 'v1', metadata: { name, labels: { 'kubernetes.io/metadata.name': name } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
  }

  /** ConfigMaps and Secrets: list (all or per namespace), create, get, replace, patch, delete. */
  async function objectRoute(req: IncomingMessage, res: ServerResponse, q: URLSearchParams, kind: ObjectKind, resource: string, ns: string | undefined, name: string | undefined): Promise<void> {
    const store = backend.objects;
    if (!store) throw notFoundPath();
    const method = req.method ?? 'GET';
    if (name === undefined) {
      if (method === 'GET') {
        const labels = parseLabelSelector(q.get('labelSelector'));
        const fields = parseFieldSelector(q.get('fieldSelector'), (o: KubeObject) => ({ 'metadata.name': o.metadata.name, 'metadata.namespace': o.metadata.namespace }), ['metadata.name', 'metadata.namespace'], kind);
        const match = (o: KubeObject) => (ns === undefined || o.metadata.namespace === ns) && labels(((o.metadata as { labels?: Record<string, string> }).labels) ?? {}) && fields(o);
        if (boolParam(q, 'watch')) {
          return serveWatch<KubeObject>(req, res, {
            resourceVersion: q.get('resourceVersion') ?? '',
            start: (rv, on) => store.watch(kind, rv, on),
            matches: match,
            key: (o) => `${o.metadata.namespace}/${o.metadata.name}`,
            render: (o) => o,
            timeoutSeconds: intParam(q, 'timeoutSeconds'),
            bookmarkMs: boolParam(q, 'allowWatchBookmarks') ? bookmarkMs : undefined,
            bookmark: (rv) => ({ kind, apiVersion: 'v1', metadata: { resourceVersion: rv } }),
          });
        }
        const list = store.list(kind);
        return sendJSON(res, 200, { kind: `${kind}List`, apiVersion: 'v1', metadata: { resourceVersion: list.resourceVersion }, items: list.items.filter(match) });
      }
      if (method === 'POST' && ns !== undefined) {
        const body = (await readObject(req)) as { metadata?: { namespace?: string } } | undefined;
        if (!body || typeof body !== 'object') throw badRequest(`the request body must be a ${kind} object`);
        body.metadata ??= {};
        if (body.metadata.namespace && body.metadata.namespace !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
        body.metadata.namespace = ns;
        return sendJSON(res, 201, await store.create(kind, body, { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) }));
      }
      throw methodNotAllowed();
    }
    const current = (): KubeObject => {
      const o = store.get(kind, ns!, name);
      if (!o) throw notFound(resource, name);
      return o;
    };
    const checked = (body: unknown): unknown => {
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest(`the request body must be a ${kind} object`);
      const m = ((body as { metadata?: Record<string, unknown> }).metadata ??= {});
      if (m.namespace && m.namespace !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      if (m.name && m.name !== name) throw badRequest(`the name of the object (${String(m.name)}) does not match the name on the URL (${name})`);
      m.namespace = ns;
      m.name = name;
      return body;
    };
    switch (method) {
      case 'GET':
        return sendJSON(res, 200, current());
      case 'PUT':
        current();
        return sendJSON(res, 200, await store.update(kind, checked(await readObject(req)), { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) }));
      case 'PATCH': {
        const type = patchTypeOf(req.headers['content-type']);
        if (!type) throw unsupportedMediaType(req.headers['content-type'] ?? '');
        const patch = await readObject(req, type === 'apply');
        if (patch === undefined) throw badRequest('the body of the request was empty');
        if (type === 'apply' && !store.get(kind, ns!, name)) return sendJSON(res, 201, await store.create(kind, checked(patch), { fieldValidation: fieldValidationOf(q) }));
        const cur = current();
        const next = checked(applyPatch(type, cur, patch)) as KubeObject;
        const patchRV = (patch as { metadata?: { resourceVersion?: string } })?.metadata?.resourceVersion;
        next.metadata.resourceVersion = typeof patchRV === 'string' ? patchRV : cur.metadata.resourceVersion;
        return sendJSON(res, 200, await store.update(kind, next, { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) }));
      }
      case 'DELETE': {
        current();
        // Deleted at once: the API server answers with a Status naming the object, not the object.
        const gone = await store.delete(kind, ns!, name);
        return sendJSON(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: resource, uid: gone.metadata.uid ?? '' } });
      }
      default:
        throw methodNotAllowed();
    }
  }

  function upgradeRequired(): ApiError {
    return badRequest('Upgrade request required');
  }

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    const segs = url.pathname.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
    const only = (...methods: string[]) => {
      if (!methods.includes(method)) throw methodNotAllowed();
    };
    const path = segs.join('/');

    if (path === 'version') return only('GET'), sendJSON(res, 200, serverVersion);
    if (path === 'openapi/v2') {
      only('GET');
      if ((req.headers.accept ?? '').includes('protobuf')) {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': openapiV2Protobuf.length });
        res.end(openapiV2Protobuf);
        return;
      }
      return sendJSON(res, 200, openapiV2JSON);
    }
    if (path === 'api') return only('GET'), sendJSON(res, 200, apiVersions(opts.serverAddress ?? req.headers.host ?? ''));
    if (path === 'api/v1') return only('GET'), sendJSON(res, 200, coreV1Resources);
    if (path === 'apis') return only('GET'), sendJSON(res, 200, apiGroupList);
    if (path === 'apis/metrics.k8s.io') return only('GET'), sendJSON(res, 200, metricsApiGroup);
    if (path === 'apis/metrics.k8s.io/v1beta1') return only('GET'), sendJSON(res, 200, metricsResources);

    if (segs[0] === 'apis' && segs[1] === 'metrics.k8s.io' && segs[2] === 'v1beta1') {
      only('GET');
      const rest = segs.slice(3);
      if (rest.length === 1 && rest[0] === 'pods') return metricsList(res, q, undefined);
      if (rest.length === 3 && rest[0] === 'namespaces' && rest[2] === 'pods') return metricsList(res, q, rest[1]);
      if (rest.length === 4 && rest[0] === 'namespaces' && rest[2] === 'pods') {
        const p = backend.getPod(rest[1]!, rest[3]!);
        const m = p && podMetrics(p);
        if (!m) throw notFound('pods', rest[3]!, 'metrics.k8s.io');
        return sendJSON(res, 200, m);
      }
      throw notFoundPath();
    }

    if (segs[0] !== 'api' || segs[1] !== 'v1') throw notFoundPath();
    const r = segs.slice(2);
    if (r.length === 1 && r[0] === 'pods') return only('GET'), listOrWatchPods(req, res, q, undefined);
    if (r.length === 1 && r[0] === 'events') return only('GET'), listOrWatchEvents(req, res, q, undefined);
    if (r.length === 1 && (r[0] === 'configmaps' || r[0] === 'secrets')) {
      only('GET');
      return objectRoute(req, res, q, r[0] === 'configmaps' ? 'ConfigMap' : 'Secret', r[0], undefined, undefined);
    }
    if (r.length === 1 && r[0] === 'namespaces') {
      only('GET');
      const items = backend.namespaces().sort().map(namespaceObject);
      return sendJSON(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: backend.listPods().resourceVersion }, items });
    }
    if (r[0] !== 'namespaces' || r.length < 2) throw notFoundPath();
    const ns = r[1]!;
    if (r.length === 2) {
      only('GET');
      if (!backend.namespaces().includes(ns)) throw notFound('namespaces', ns);
      return sendJSON(res, 200, namespaceObject(ns));
    }
    const resource = r[2];
    if (resource === 'events') {
      if (r.length === 3) return only('GET'), listOrWatchEvents(req, res, q, ns);
      if (r.length === 4) {
        only('GET');
        const e = backend.listEvents().items.find((x) => x.metadata.namespace === ns && x.metadata.name === r[3]);
        if (!e) throw notFound('events', r[3]!);
        if (wantsTable(req)) return sendJSON(res, 200, eventTable([e as unknown as Event], { now: now(), includeObject: includeObjectOf(q), resourceVersion: e.metadata.resourceVersion ?? '' }));
        return sendJSON(res, 200, withKind(e, 'Event'));
      }
      throw notFoundPath();
    }
    if ((resource === 'configmaps' || resource === 'secrets') && r.length <= 4) {
      return objectRoute(req, res, q, resource === 'configmaps' ? 'ConfigMap' : 'Secret', resource, ns, r[3]);
    }
    if (resource !== 'pods') throw notFoundPath();
    if (r.length === 3) {
      if (method === 'GET') return listOrWatchPods(req, res, q, ns);
      if (method === 'POST') return createPod(req, res, q, ns);
      throw methodNotAllowed();
    }
    const name = r[3]!;
    if (r.length === 4) {
      switch (method) {
        case 'GET': {
          const pod = podOr404(ns, name);
          if (wantsTable(req)) return sendJSON(res, 200, podTable([pod], { now: now(), includeObject: includeObjectOf(q), resourceVersion: pod.metadata?.resourceVersion ?? '' }));
          return sendJSON(res, 200, withKind(pod, 'Pod'));
        }
        case 'PUT': {
          const pod = checkBodyPod(await readObject(req), ns, name);
          podOr404(ns, name);
          return sendJSON(res, 200, withKind(await backend.updatePod(pod, { fieldValidation: fieldValidationOf(q), dryRun: dryRunOf(q) }), 'Pod'));
        }
        case 'PATCH':
          return patchPod(req, res, q, ns, name);
        case 'DELETE':
          return deletePod(req, res, q, ns, name);
        default:
          throw methodNotAllowed();
      }
    }
    if (r.length === 5) {
      switch (r[4]) {
        case 'status':
          only('GET');
          return sendJSON(res, 200, withKind(podOr404(ns, name), 'Pod'));
        case 'log':
          only('GET');
          return podLog(res, q, ns, name);
        case 'exec':
        case 'attach':
        case 'portforward':
          only('GET', 'POST');
          podOr404(ns, name);
          throw upgradeRequired();
      }
    }
    throw notFoundPath();
  }

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const first = url.pathname.split('/')[1];
    if (first !== 'api' && first !== 'apis' && first !== 'version' && first !== 'openapi') return false;
    try {
      await route(req, res, url);
    } catch (err) {
      sendError(res, err);
    }
    return true;
  };
}
