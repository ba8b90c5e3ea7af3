// Who may use which listener, applied before any handler runs: the unix socket (mode 0600, so only
// its owner connects) is trusted; TCP needs a bearer token on every path but /healthz — the agent's
// own (the local administrator) or one the listener's token authenticator accepts (a bound
// service-account token: its user) — or anonymous access where it was explicitly allowed (loopback
// only); a bearer token neither accepts is 401 whatever the path, as the API server's authentication
// filter answers. The read-only port serves only health, pods, stats and metrics, without
// authentication, as the kubelet's :10255.

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { adminUser, anonymousUser, requestURL, type RequestInfo, type UserInfo } from '../http/router.js';
import { statusBody, type Status } from '../http/status.js';

/** A bearer token's user, or undefined when the token is not one the authenticator accepts (given by whoever holds the store). */
export type TokenAuthenticator = (token: string) => UserInfo | undefined;

export type AccessPolicy = { kind: 'unix' } | { kind: 'tcp'; token: string; anonymous: boolean; authenticate?: TokenAuthenticator } | { kind: 'read-only' };

const readOnlyPrefixes = ['/healthz', '/pods', '/stats', '/metrics', '/spec'];

function underPrefix(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path === p || path.startsWith(`${p}/`));
}

/** The bearer token of an Authorization header, if it carries one. */
function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
}

function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The request's identity, or the Status refusing it (401 Unauthorized, 403 Forbidden). */
export function authorize(req: IncomingMessage, policy: AccessPolicy): RequestInfo | Status {
  const path = requestURL(req).pathname;
  switch (policy.kind) {
    case 'unix':
      return { listener: 'unix', user: adminUser };
    case 'read-only':
      if (underPrefix(path, readOnlyPrefixes) && (req.method === 'GET' || req.method === 'HEAD') && !req.headers.upgrade) {
        return { listener: 'read-only', user: anonymousUser };
      }
      return statusBody(403, 'Forbidden', `forbidden: the read-only port does not serve ${req.method} ${path}`);
    case 'tcp': {
      const given = bearerToken(req.headers.authorization);
      if (tokenMatches(given, policy.token)) return { listener: 'tcp', user: adminUser };
      const user = given !== undefined ? policy.authenticate?.(given) : undefined;
      if (user) return { listener: 'tcp', user };
      if (req.headers.authorization === undefined && (underPrefix(path, ['/healthz']) || policy.anonymous)) {
        return { listener: 'tcp', user: anonymousUser };
      }
      return statusBody(401, 'Unauthorized', 'Unauthorized');
    }
  }
}

/** True for loopback addresses (127.0.0.0/8, ::1, localhost), the only ones anonymous access may bind. */
export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}
