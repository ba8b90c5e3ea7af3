// Who may use which listener, applied before any handler runs: the unix socket (mode 0600, so only
// its owner connects) is trusted; TCP needs the bearer token on every path but /healthz, or anonymous
// access where it was explicitly allowed (loopback only); the read-only port serves only health,
// pods, stats and metrics, without authentication, as the kubelet's :10255.

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { adminUser, anonymousUser, requestURL, type RequestInfo } from '../http/router.js';
import { statusBody, type Status } from '../http/status.js';

export type AccessPolicy = { kind: 'unix' } | { kind: 'tcp'; token: string; anonymous: boolean } | { kind: 'read-only' };

const readOnlyPrefixes = ['/healthz', '/pods', '/stats', '/metrics', '/spec'];

function underPrefix(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path === p || path.startsWith(`${p}/`));
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!);
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
    case 'tcp':
      if (tokenMatches(req.headers.authorization, policy.token)) return { listener: 'tcp', user: adminUser };
      if (req.headers.authorization === undefined && (underPrefix(path, ['/healthz']) || policy.anonymous)) {
        return { listener: 'tcp', user: anonymousUser };
      }
      return statusBody(401, 'Unauthorized', 'Unauthorized');
  }
}

/** True for loopback addresses (127.0.0.0/8, ::1, localhost), the only ones anonymous access may bind. */
export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}
