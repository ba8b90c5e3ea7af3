// The authorization step of the agent's server, before any handler acts (the apiserver's
// WithImpersonation then WithAuthorization filters): impersonation headers are honoured when the caller
// may impersonate, then a request whose user is not in system:masters is authorized by RBAC with its
// attributes — the API's paths as the apiserver derives them, the apiserver's own non-resource paths
// (/version, /healthz, /livez, /readyz), and the kubelet's paths served beside them as the kubelet
// authorizes them (nodes/proxy, nodes/stats…). exec, attach and portforward over a WebSocket (GET) need
// `create` as well, as since 1.30. The read-only port is not authorized (it serves no secrets).

import type { IncomingMessage } from 'node:http';
import { requestInfo, requestURL, setRequestInfo, type RequestHandler, type UpgradeHandler, type UserInfo } from '../../http/router.js';
import type { ObjectsBackend } from '../backend.js';
import { requestAttributes, type Attributes } from './attributes.js';
import { authorize, forbidden, isPrivileged } from './authorizer.js';
import { asksImpersonation, impersonatedUser } from './impersonation.js';
import { storeRbacSource } from './store-source.js';

export interface AuthorizationFilterOptions {
  objects: ObjectsBackend | undefined;
  /** The attributes of a path that is neither the API's nor the apiserver's (the kubelet's routes). */
  otherPath?(user: UserInfo, method: string, path: string): Attributes;
}

const apiserverPaths = /^\/(api|apis|version|openapi|healthz|livez|readyz)(\/|$)/;
const streamSubresources = new Set(['exec', 'attach', 'portforward']);

export interface AuthorizationFilter {
  request: RequestHandler;
  upgrade: UpgradeHandler;
}

export function authorizationFilter(opts: AuthorizationFilterOptions): AuthorizationFilter {
  const src = storeRbacSource(opts.objects);
  const check = (a: Attributes): void => {
    const d = authorize(src, a);
    if (!d.allowed) throw forbidden(a, d.reason);
  };
  /** Throws the 403 of a refused request; passes (false) otherwise. */
  const guard = (req: IncomingMessage): false => {
    const info = requestInfo(req);
    if (!info || info.listener === 'read-only') return false;
    let user = info.user;
    if (asksImpersonation(req)) {
      user = impersonatedUser(req, user, (a) => authorize(src, a));
      setRequestInfo(req, { ...info, user });
    }
    if (isPrivileged(user)) return false;
    const method = req.method ?? 'GET';
    const url = requestURL(req);
    const path = url.pathname;
    const a = apiserverPaths.test(path) || !opts.otherPath ? requestAttributes(user, method, path, url.searchParams) : opts.otherPath(user, method, path);
    check(a);
    if (a.resourceRequest && a.verb === 'get' && streamSubresources.has(a.subresource) && req.headers.upgrade) check({ ...a, verb: 'create' });
    return false;
  };
  return {
    request: (req) => {
      try {
        return guard(req);
      } catch (err) {
        req.resume();
        throw err;
      }
    },
    upgrade: (req) => guard(req),
  };
}
