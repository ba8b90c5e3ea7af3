// The Kubernetes API's paths on the server's route table: discovery, /version, /openapi/v2 and v3, and the
// resource paths of every group/version (collection, object, subresource; namespaced and cluster-wide),
// as the apiserver's endpoints/installer.go lays them out. Light on purpose: what answers them is asked
// for on each request (mount.ts loads the API on the first).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestURL, type RouteParams, type Router } from '../http/router.js';
import { notFoundPath } from '../http/status.js';

export type KubeApiEndpoint =
  'version' | 'openapi' | 'openapiV3' | 'apiVersions' | 'groupList' | 'group' | 'resourceList' | 'collection' | 'item' | 'subresource';

/** What the routes call: one function per kind of path (params: group, version, namespace, resource, name, subresource). */
export type KubeApi = Record<KubeApiEndpoint, (req: IncomingMessage, res: ServerResponse, params: RouteParams, url: URL) => void | Promise<void>>;

const restMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The route table: more specific patterns first (a namespaced collection before a cluster-scoped subresource of the same length). */
function routeTable(): Array<[methods: string[], pattern: string, endpoint: KubeApiEndpoint]> {
  const routes: Array<[string[], string, KubeApiEndpoint]> = [
    [['GET'], '/version', 'version'],
    [['GET'], '/openapi/v2', 'openapi'],
    [['GET'], '/openapi/v3', 'openapiV3'],
    [['GET'], '/openapi/v3/:a', 'openapiV3'],
    [['GET'], '/openapi/v3/:a/:b', 'openapiV3'],
    [['GET'], '/openapi/v3/:a/:b/:c', 'openapiV3'],
    [['GET'], '/api', 'apiVersions'],
    [['GET'], '/apis', 'groupList'],
    [['GET'], '/apis/:group', 'group'],
    [['GET'], '/api/:version', 'resourceList'],
    [['GET'], '/apis/:group/:version', 'resourceList'],
  ];
  for (const prefix of ['/api/:version', '/apis/:group/:version']) {
    routes.push(
      [restMethods, `${prefix}/namespaces/:namespace/:resource/:name/:subresource`, 'subresource'],
      [restMethods, `${prefix}/namespaces/:namespace/:resource/:name`, 'item'],
      [restMethods, `${prefix}/namespaces/:namespace/:resource`, 'collection'],
      [restMethods, `${prefix}/:resource/:name/:subresource`, 'subresource'],
      [restMethods, `${prefix}/:resource/:name`, 'item'],
      [restMethods, `${prefix}/:resource`, 'collection'],
    );
  }
  return routes;
}

const apiPrefixes = /^\/(api|apis|version|openapi)(\/|$)/;

/** Adds the API's routes to a route table; `api` is asked for the API on each request (and may load it then). */
export function registerKubeApiRoutes(router: Router, api: () => Promise<KubeApi>): void {
  for (const [methods, pattern, endpoint] of routeTable()) {
    router.route(methods, pattern, async (req, res, params, url) => (await api())[endpoint](req, res, params, url));
  }
  // Any other path under the API's prefixes is the API's 404.
  router.use((req) => {
    if (!apiPrefixes.test(requestURL(req).pathname)) return false;
    req.resume();
    throw notFoundPath();
  });
}
