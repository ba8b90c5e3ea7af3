// The Kubernetes API over a KubeBackend: each route of kubeapi/routes.ts resolved against the
// resource table (group/version, resource, scope) and handed to the one REST handler (rest.ts), with
// discovery generated from the same table. Upstream: apiserver's endpoints (installer.go, discovery)
// over the generic registry.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router, type RouteParams } from '../http/router.js';
import { notFoundPath, sendJSON } from '../http/status.js';
import type { KubeBackend, Storage } from './backend.js';
import { aggregatedDiscovery, aggregatedDiscoveryRequested, sendAggregatedDiscovery } from './aggregated-discovery.js';
import { apiGroup, apiGroupList, apiVersions, resourceList, serverVersion } from './discovery.js';
import { OpenAPIService } from './openapi-handler.js';
import type { ApiContext, ResourceDef } from './resource-def.js';
import { ResourceIndex, resourceTable } from './resource-table.js';
import { ResourceRegistry } from './resource-registry.js';
import { CustomResourceController } from './apiextensions/crd-controller.js';
import { RestHandler, type RestRequest } from './rest.js';
import { registerKubeApiRoutes, type KubeApi } from './routes.js';

export interface KubeApiOptions {
  /** ms since epoch, for Table ages and metrics timestamps. */
  now?: () => number;
  /** How often a watch that allows bookmarks gets one (default 60 s, as the API server). */
  bookmarkMs?: number;
  /** Address clients are told to use (APIVersions.serverAddressByClientCIDRs). */
  serverAddress?: string;
  /** The resources served (default: the resource table). */
  resources?: readonly ResourceDef[];
}

export type KubeRequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** The API's endpoints over a backend, for the routes to call. */
export function createKubeApi(backend: KubeBackend, opts: KubeApiOptions = {}): KubeApi {
  const table = opts.resources ?? resourceTable;
  // The table's resources, and those of the CustomResourceDefinitions the backend keeps.
  const registry = new ResourceRegistry(table, backend.objects ? new CustomResourceController(backend.objects) : undefined);
  const ctx: ApiContext = { now: opts.now ?? Date.now };
  const rest = new RestHandler(backend, { ...ctx, bookmarkMs: opts.bookmarkMs ?? 60_000 });
  const storages = new Map<ResourceDef, Storage | undefined>();

  const storageOf = (def: ResourceDef): Storage => {
    if (!storages.has(def)) storages.set(def, def.storage(backend, ctx));
    const s = storages.get(def);
    if (!s) throw notFoundPath();
    return s;
  };

  /**
   * The row a resource path names, in the scope the path has; 404 for anything else. A namespaced kind
   * is addressed without a namespace only as a collection (`across`: listed across namespaces).
   */
  const resolve = (req: IncomingMessage, res: ServerResponse, url: URL, p: RouteParams, namespace: string | undefined, across: boolean): RestRequest => {
    const def = registry.index().lookup(p.group ?? '', p.version!, p.resource!);
    if (!def) throw notFoundPath();
    if (namespace !== undefined ? !def.namespaced : def.namespaced && !across) throw notFoundPath();
    return { req, res, query: url.searchParams, def, storage: storageOf(def), namespace: def.namespaced ? namespace : '' };
  };

  const openapi = new OpenAPIService(new ResourceIndex(table), ctx.now);
  return {
    version: (_req, res) => sendJSON(res, 200, serverVersion),
    openapi: (req, res) => openapi.serveV2(req, res),
    openapiV3: (req, res, _p, url) => openapi.serveV3(req, res, url),
    apiVersions: (req, res) => {
      const aggregated = aggregatedDiscoveryRequested(req);
      if (aggregated) return sendAggregatedDiscovery(req, res, aggregated, aggregatedDiscovery(registry.index(), 'api', aggregated));
      res.setHeader('Vary', 'Accept');
      sendJSON(res, 200, apiVersions(registry.index(), opts.serverAddress ?? req.headers.host ?? ''));
    },
    groupList: (req, res) => {
      const aggregated = aggregatedDiscoveryRequested(req);
      if (aggregated) return sendAggregatedDiscovery(req, res, aggregated, aggregatedDiscovery(registry.index(), 'apis', aggregated));
      res.setHeader('Vary', 'Accept');
      sendJSON(res, 200, apiGroupList(registry.index()));
    },
    group: (_req, res, p) => {
      const g = apiGroup(registry.index(), p.group!);
      if (!g) throw notFoundPath();
      sendJSON(res, 200, g);
    },
    resourceList: (_req, res, p) => {
      if (!registry.index().servesGroupVersion(p.group ?? '', p.version!)) throw notFoundPath();
      sendJSON(res, 200, resourceList(registry.index(), p.group ?? '', p.version!));
    },
    collection: (req, res, p, url) => {
      // /namespaces/<ns>/<subresource> is a Namespace's subresource, not a namespaced collection.
      if (p.namespace !== undefined && !registry.index().lookup(p.group ?? '', p.version!, p.resource!)) {
        return rest.subresource(resolve(req, res, url, { ...p, resource: 'namespaces' }, undefined, false), p.namespace, p.resource!);
      }
      return rest.collection(resolve(req, res, url, p, p.namespace, true));
    },
    item: (req, res, p, url) => rest.item(resolve(req, res, url, p, p.namespace, false), p.name!),
    subresource: (req, res, p, url) => rest.subresource(resolve(req, res, url, p, p.namespace, false), p.name!, p.subresource!),
  };
}

/**
 * The API on a route table of its own, as one request handler: resolves true when it answered, false
 * for paths outside the API (for servers that have no other routes, and the bench).
 */
export function createKubeApiHandler(backend: KubeBackend, opts: KubeApiOptions = {}): KubeRequestHandler {
  const router = new Router();
  const api = createKubeApi(backend, opts);
  registerKubeApiRoutes(router, async () => api);
  return (req, res) => router.handle(req, res);
}
