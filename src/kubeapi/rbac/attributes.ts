// The attributes a request is authorized by (apiserver's authorizer.Attributes), derived from its
// method, path and query as the apiserver's RequestInfoFactory does (endpoints/request/requestinfo.go):
// /api/v1/... and /apis/GROUP/VERSION/... are resource requests (verb from the method: get, list,
// watch, create, update, patch, delete, deletecollection; namespace, resource, name, subresource
// from the path); anything else — discovery (/api, /apis/GROUP/VERSION), /version, /openapi/*,
// /healthz — is a non-resource request whose verb is the method in lower case.

import type { UserInfo } from '../../http/router.js';

export interface Attributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  /** The request's path (non-resource requests). */
  path: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

const verbsByMethod: Readonly<Record<string, string>> = { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
/** Subresources of a namespace (`/namespaces/NS/status`), not namespaced collections. */
const namespaceSubresources = new Set(['status', 'finalize']);
/** The deprecated verbs in the path (`/api/v1/watch/pods`). */
const specialVerbs = new Set(['proxy', 'watch']);

/** The name a field selector `metadata.name=X` picks, which a list or watch is authorized by. */
function nameFromFieldSelector(selector: string | null): string {
  if (!selector) return '';
  const terms = selector.split(',');
  if (terms.length !== 1) return '';
  const m = /^metadata\.name(==?)(.*)$/.exec(terms[0]!.trim());
  return m ? m[2]!.trim() : '';
}

function isTrue(value: string | null): boolean {
  return value === 'true' || value === '1';
}

/** A request's attributes (user, method, path and query as the client sent them). */
export function requestAttributes(user: UserInfo, method: string, path: string, query: URLSearchParams): Attributes {
  const base: Attributes = {
    user,
    verb: method.toLowerCase(),
    resourceRequest: false,
    path,
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  let parts = path.replace(/^\/+|\/+$/g, '').split('/');
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return base;
  const grouped = parts[0] === 'apis';
  parts = parts.slice(1);
  let apiGroup = '';
  if (grouped) {
    if (parts.length < 3) return base;
    apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  const a: Attributes = { ...base, resourceRequest: true, apiGroup, apiVersion: parts[0]!, verb: verbsByMethod[method] ?? '' };
  parts = parts.slice(1);
  if (specialVerbs.has(parts[0]!)) {
    if (parts.length < 2) return { ...a, verb: parts[0]! };
    a.verb = parts[0]!;
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      a.namespace = parts[1]!;
      if (parts.length > 2 && !namespaceSubresources.has(parts[2]!)) parts = parts.slice(2);
    }
  }
  if (parts.length >= 3) a.subresource = parts[2]!;
  if (parts.length >= 2) a.name = parts[1]!;
  if (parts.length >= 1) a.resource = parts[0]!;
  if (!a.name && a.verb === 'get') {
    a.verb = isTrue(query.get('watch')) ? 'watch' : 'list';
    a.name = nameFromFieldSelector(query.get('fieldSelector'));
  } else if (a.verb === 'watch' && !a.name) {
    a.name = nameFromFieldSelector(query.get('fieldSelector'));
  }
  if (!a.name && a.verb === 'delete') a.verb = 'deletecollection';
  return a;
}
