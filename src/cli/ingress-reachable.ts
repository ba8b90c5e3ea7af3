// `up` and `run` of manifests with Ingresses: one line per Ingress the command applied, the first time
// one of its backend Services has a Ready endpoint, with its URLs on the agent's ingress proxy
// (`ingress/demo reachable at http://web.localhost:8080/`), beside the Services' own lines.

import type { Ingress } from '../api/validation/networking.js';
import { ingressServices, ingressURLs, type IngressAddress } from '../proxy/ingress-urls.js';
import { readyCount, type EndpointsLike } from '../proxy/service-urls.js';
import { agentRequest } from './agent-client.js';
import type { AppliedRef } from './object-paths.js';
import { followWatch } from './pod-watch.js';
import { followServiceReachability, type ServiceReachability } from './service-reachable.js';

/** Where the agent's ingress proxy listens, as its status reports it; undefined when it has none. */
export async function ingressAddressOf(root: string): Promise<IngressAddress | undefined> {
  const r = await agentRequest(root, 'GET', '/podvisor/v1/status').catch(() => undefined);
  if (r?.status !== 200) return undefined;
  return r.json<{ ingress?: IngressAddress }>().ingress;
}

/** `ingress/demo reachable at http://web.localhost:8080/, …`; undefined when it has no URL. */
export function ingressReachableLine(ing: Ingress, at: IngressAddress): string | undefined {
  const urls = ingressURLs(ing, at);
  return urls.length ? `ingress/${ing.metadata?.name ?? ''} reachable at ${urls.join(', ')}` : undefined;
}

/** Follows the applied Ingresses and the Endpoints of their backends until signal aborts; say is called once per Ingress. */
export function followIngressReachability(root: string, applied: readonly AppliedRef[], say: (line: string) => void, signal: AbortSignal): ServiceReachability {
  const wanted = new Set(applied.filter((r) => r.kind === 'Ingress').map((r) => `${r.ns}/${r.name}`));
  let announced!: () => void;
  const allAnnounced = new Promise<void>((resolve) => (announced = resolve));
  if (!wanted.size) {
    announced();
    return { watching: Promise.resolve(), allAnnounced };
  }
  const current = new Map<string, Ingress>();
  const ready = new Map<string, number>();
  const told = new Set<string>();
  let at: IngressAddress | undefined;
  const keyOf = (o: { metadata?: { namespace?: string; name?: string } }) => `${o.metadata?.namespace ?? 'default'}/${o.metadata?.name ?? ''}`;
  const check = () => {
    if (!at) return;
    for (const [key, ing] of current) {
      if (told.has(key)) continue;
      const ns = ing.metadata?.namespace ?? 'default';
      if (!ingressServices(ing).some((s) => (ready.get(`${ns}/${s}`) ?? 0) > 0)) continue;
      const line = ingressReachableLine(ing, at);
      if (!line) continue;
      told.add(key);
      say(line);
    }
    if ([...wanted].every((k) => told.has(k))) announced();
  };
  const watching = ingressAddressOf(root).then((a) => {
    at = a;
    if (!at) {
      announced();
      return;
    }
    return Promise.all([
      followWatch<Ingress>(
        root,
        '/apis/networking.k8s.io/v1/ingresses?watch=1',
        (l) => {
          const key = keyOf(l.object);
          if (!wanted.has(key)) return;
          if (l.type === 'DELETED') current.delete(key);
          else if (l.type === 'ADDED' || l.type === 'MODIFIED') current.set(key, l.object);
          check();
        },
        signal,
      ),
      followWatch<EndpointsLike & { metadata?: { namespace?: string; name?: string } }>(
        root,
        '/api/v1/endpoints?watch=1',
        (l) => {
          ready.set(keyOf(l.object), l.type === 'DELETED' ? 0 : readyCount(l.object));
          check();
        },
        signal,
      ),
    ]).then(() => undefined);
  });
  return { watching, allAnnounced };
}

/** The Services' and the Ingresses' reachability lines together. */
export function followReachability(
  root: string,
  applied: readonly AppliedRef[],
  nodePortAddresses: readonly string[],
  say: (line: string) => void,
  signal: AbortSignal,
): ServiceReachability {
  const services = followServiceReachability(root, applied, nodePortAddresses, say, signal);
  const ingresses = followIngressReachability(root, applied, say, signal);
  return {
    watching: Promise.all([services.watching, ingresses.watching]).then(() => undefined),
    allAnnounced: Promise.all([services.allAnnounced, ingresses.allAnnounced]).then(() => undefined),
  };
}
