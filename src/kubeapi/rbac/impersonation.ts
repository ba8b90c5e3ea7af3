// Impersonation (apiserver's endpoints/filters/impersonation.go): a request carrying Impersonate-User
// (with Impersonate-Group, Impersonate-Extra-<key>, Impersonate-Uid) runs as that user once the caller
// is allowed the `impersonate` verb on each: users (or serviceaccounts, for a service account's
// username), groups, userextras/<key> and uids of authentication.k8s.io. A service account impersonated
// without groups gets the service account groups; a user other than system:anonymous gets
// system:authenticated unless system:authenticated or system:unauthenticated was asked for.

import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../http/status.js';
import type { UserInfo } from '../../http/router.js';
import type { Attributes } from './attributes.js';
import { forbidden, type Decision } from './authorizer.js';
import { splitServiceAccountUsername } from './rule-resolver.js';

const userHeader = 'impersonate-user';
const groupHeader = 'impersonate-group';
const uidHeader = 'impersonate-uid';
const extraPrefix = 'impersonate-extra-';

const anonymous = 'system:anonymous';
const authenticated = 'system:authenticated';
const unauthenticated = 'system:unauthenticated';

function values(req: IncomingMessage, name: string): string[] {
  return req.headersDistinct[name] ?? [];
}

/** Whether the request asks to impersonate anyone (any Impersonate-* header). */
export function asksImpersonation(req: IncomingMessage): boolean {
  return Object.keys(req.headers).some((h) => h === userHeader || h === groupHeader || h === uidHeader || h.startsWith(extraPrefix));
}

function acting(requester: UserInfo, resource: string, name: string, more: Partial<Attributes> = {}): Attributes {
  return {
    user: requester,
    verb: 'impersonate',
    resourceRequest: true,
    path: '',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: '',
    resource,
    subresource: '',
    name,
    ...more,
  };
}

/**
 * The user the request runs as: the impersonated one when every impersonation is allowed (the headers
 * are then removed), else a 403 naming the first refused; 500 for groups, extras or a uid without a user.
 */
export function impersonatedUser(req: IncomingMessage, requester: UserInfo, authorize: (a: Attributes) => Decision): UserInfo {
  const username = values(req, userHeader)[0];
  const groups = values(req, groupHeader);
  const uid = values(req, uidHeader)[0];
  const extra: Record<string, string[]> = {};
  for (const h of Object.keys(req.headers)) {
    if (!h.startsWith(extraPrefix)) continue;
    let key = h.slice(extraPrefix.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      // kept as sent
    }
    extra[key] = values(req, h);
  }
  const checks: Attributes[] = [];
  if (username === undefined || username === '') {
    throw new ApiError(500, 'InternalError', `Internal error occurred: requested impersonation of groups, extra or uid without impersonating a user`);
  }
  const sa = splitServiceAccountUsername(username);
  if (sa) checks.push(acting(requester, 'serviceaccounts', sa.name, { namespace: sa.namespace }));
  else checks.push(acting(requester, 'users', username));
  for (const g of groups) checks.push(acting(requester, 'groups', g));
  for (const [key, vals] of Object.entries(extra)) {
    for (const v of vals) checks.push(acting(requester, 'userextras', v, { apiGroup: 'authentication.k8s.io', subresource: key }));
  }
  if (uid !== undefined) checks.push(acting(requester, 'uids', uid, { apiGroup: 'authentication.k8s.io' }));
  for (const a of checks) {
    const d = authorize(a);
    if (!d.allowed) throw forbidden(a, d.reason);
  }
  let finalGroups = [...groups];
  if (sa && groups.length === 0) finalGroups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`];
  if (username !== anonymous) {
    if (!finalGroups.includes(authenticated) && !finalGroups.includes(unauthenticated)) finalGroups.push(authenticated);
  } else if (!finalGroups.includes(unauthenticated)) finalGroups.push(unauthenticated);
  for (const h of Object.keys(req.headers)) {
    if (h === userHeader || h === groupHeader || h === uidHeader || h.startsWith(extraPrefix)) delete req.headers[h];
  }
  return { username, groups: finalGroups, ...(uid !== undefined ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}
