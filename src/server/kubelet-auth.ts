// The kubelet port's filter, as the kubelet's server/auth.go: authenticate (client certificate,
// then bearer token, then anonymous when allowed; otherwise 401 "Unauthorized"), derive the request
// attributes (verb from the method, resource nodes, the subresource by path), authorise (AlwaysAllow
// or the webhook; 403 "Forbidden (user=…, verb=…, resource=…, subresource=…)").

import type { IncomingMessage } from 'node:http';
import type { Decision, KubeletRequestAttributes } from './auth-webhook.js';
import { requestURL } from '../http/router.js';
import { x509User, type UserInfo } from './x509-auth.js';

export interface KubeletAuthOptions {
  nodeName: string;
  /** Client certificates verified against --client-ca-file are users (the TLS layer verifies them). */
  x509: boolean;
  /** Bearer tokens through TokenReview; undefined: tokens are not accepted. */
  authenticateToken?: (token: string) => Promise<UserInfo | undefined>;
  /** --anonymous-auth: requests without credentials are system:anonymous. */
  anonymous: boolean;
  /** undefined: AlwaysAllow. */
  authorize?: (user: UserInfo, attrs: KubeletRequestAttributes) => Promise<Decision>;
}

export type AuthOutcome = { ok: true; user: UserInfo } | { ok: false; code: 401 | 403 | 500; message: string };

const verbs: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}

/** The attributes the kubelet authorises a request with. */
export function kubeletRequestAttributes(method: string, path: string, nodeName: string): KubeletRequestAttributes {
  let subresource = 'proxy';
  if (isSubpath(path, '/stats')) subresource = 'stats';
  else if (isSubpath(path, '/metrics')) subresource = 'metrics';
  else if (isSubpath(path, '/logs')) subresource = 'log';
  else if (isSubpath(path, '/spec')) subresource = 'spec';
  else if (isSubpath(path, '/checkpoint')) subresource = 'checkpoint';
  return { verb: verbs[method] ?? method.toLowerCase(), resource: 'nodes', subresource, name: nodeName, apiVersion: 'v1', path };
}

function bearer(req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

/** Authenticates and authorises one request. */
export async function checkKubeletRequest(req: IncomingMessage, o: KubeletAuthOptions): Promise<AuthOutcome> {
  let user: UserInfo | undefined = o.x509 ? x509User(req) : undefined;
  if (!user) {
    const token = bearer(req);
    if (token !== undefined) {
      if (!o.authenticateToken) return { ok: false, code: 401, message: 'Unauthorized' };
      try {
        user = await o.authenticateToken(token);
      } catch {
        return { ok: false, code: 401, message: 'Unauthorized' };
      }
      if (!user) return { ok: false, code: 401, message: 'Unauthorized' };
    } else if (o.anonymous) {
      user = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
    } else {
      return { ok: false, code: 401, message: 'Unauthorized' };
    }
  }
  const attrs = kubeletRequestAttributes(req.method ?? 'GET', requestURL(req).pathname, o.nodeName);
  if (!o.authorize) return { ok: true, user };
  const what = `user=${user.username}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource}`;
  let d: Decision;
  try {
    d = await o.authorize(user, attrs);
  } catch {
    return { ok: false, code: 500, message: `Authorization error (${what})` };
  }
  if (!d.allowed) return { ok: false, code: 403, message: `Forbidden (${what})` };
  return { ok: true, user };
}
