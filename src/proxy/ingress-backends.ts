// The Ready endpoints of an Ingress backend: its Service's port (by number or by name) and, from the
// Service's EndpointSlices (label kubernetes.io/service-name), the endpoints whose ready condition is
// not false, on the slice port of the same name, as an ingress controller reads them. Why a backend
// has none is said in one line (the 503's body).

import type { ServiceLike } from '../api/validation/service.js';
import type { Endpoint } from './balancer.js';
import type { RouteBackend } from './ingress-routes.js';

export interface EndpointSliceLike {
  metadata?: { namespace?: string; name?: string; labels?: Record<string, string> };
  addressType?: string;
  endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean | null } }>;
  ports?: Array<{ name?: string | null; port?: number | null; protocol?: string | null }> | null;
}

export const serviceNameLabel = 'kubernetes.io/service-name';

/** `default/web port 80` (or `port http`). */
export const backendName = (b: RouteBackend) => `${b.namespace}/${b.service} port ${b.port}`;

/** A backend's endpoints, or why it has none. */
export type BackendEndpoints = { endpoints: Endpoint[] } | { reason: string };

/** The Ready endpoints of a backend, from its Service and the Service's EndpointSlices. */
export function backendEndpoints(b: RouteBackend, svc: ServiceLike | undefined, slices: readonly EndpointSliceLike[]): BackendEndpoints {
  if (!svc) return { reason: `service ${b.namespace}/${b.service} not found` };
  const ports = svc.spec?.ports ?? [];
  const port = typeof b.port === 'number' ? ports.find((p) => p.port === b.port) : ports.find((p) => p.name === b.port);
  if (!port || (port.protocol ?? 'TCP') !== 'TCP') return { reason: `service ${b.namespace}/${b.service} has no TCP port ${b.port}` };
  const endpoints: Endpoint[] = [];
  const seen = new Set<string>();
  for (const s of slices) {
    if (s.addressType && s.addressType !== 'IPv4' && s.addressType !== 'IPv6') continue;
    const sp = (s.ports ?? []).find((p) => (p.name ?? '') === (port.name ?? '') && (p.protocol ?? 'TCP') === 'TCP');
    if (!sp?.port) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      const ip = e.addresses?.[0];
      if (!ip || seen.has(`${ip}:${sp.port}`)) continue;
      seen.add(`${ip}:${sp.port}`);
      endpoints.push({ ip, port: sp.port });
    }
  }
  if (!endpoints.length) return { reason: `no ready endpoints for service ${backendName(b)}` };
  return { endpoints };
}
