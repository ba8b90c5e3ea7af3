// `up` and `run` of manifests with Services: one line per Service the command applied, the first time
// it has Ready endpoints, with where it is reachable from the host (the agent's "Service reachable").

import type { ServiceLike } from '../api/validation/service.js';
import { readyCount, serviceAddresses, type EndpointsLike } from '../proxy/service-urls.js';
import { agentRequest } from './agent-client.js';
import type { AppliedRef } from './object-paths.js';
import { followWatch } from './pod-watch.js';

/** `service/web reachable at http://127.0.0.1:30080 (NodePort), http://127.99.0.12:80 (ClusterIP)`; undefined when it has no URL (headless, ExternalName). */
export function serviceReachableLine(svc: ServiceLike, nodePortAddresses: readonly string[]): string | undefined {
  const addresses = serviceAddresses(svc, nodePortAddresses);
  if (!addresses.length) return undefined;
  return `service/${svc.metadata?.name ?? ''} reachable at ${addresses.map((a) => `${a.url} (${a.via})`).join(', ')}`;
}

/**
 * Where the agent's NodePorts answer from the host: its --nodeport-addresses as its status reports
 * them, else those of this command line, else the loopback; 0.0.0.0 (every interface) as 127.0.0.1.
 */
export async function nodePortAddressesOf(root: string, flagValue: unknown): Promise<string[]> {
  let listed: string[] | undefined;
  const r = await agentRequest(root, 'GET', '/podvisor/v1/status').catch(() => undefined);
  if (r?.status === 200) listed = r.json<{ nodePortAddresses?: string[] }>().nodePortAddresses;
  listed ??= typeof flagValue === 'string' && flagValue ? flagValue.split(',').map((a) => a.trim()) : ['127.0.0.1'];
  return [...new Set(listed.map((a) => (a === '0.0.0.0' ? '127.0.0.1' : a)))];
}

/** A Service whose endpoints the agent keeps and that has URLs: one with a selector, neither headless nor ExternalName. */
function isAnnounced(o: { spec?: ServiceLike['spec'] }): boolean {
  const spec = o.spec ?? {};
  return spec.type !== 'ExternalName' && spec.clusterIP !== 'None' && Object.keys(spec.selector ?? {}).length > 0;
}

export interface ServiceReachability {
  /** Resolves when the watches end (signal aborted), rejects when the agent cuts them. */
  watching: Promise<void>;
  /** Resolves once every Service with a selector (not headless, not ExternalName) has been announced. */
  allAnnounced: Promise<void>;
}

/**
 * Follows the Services and Endpoints until signal aborts, and calls say once per Service of services
 * when it first has a Ready endpoint (a LoadBalancer once it also has its ingress).
 */
export function followServiceReachability(
  root: string,
  services: readonly AppliedRef[],
  nodePortAddresses: readonly string[],
  say: (line: string) => void,
  signal: AbortSignal,
): ServiceReachability {
  const applied = services.filter((r) => r.kind === 'Service');
  const wanted = new Set(applied.map((r) => `${r.ns}/${r.name}`));
  const awaited = new Set(applied.filter((r) => isAnnounced(r.object as { spec?: ServiceLike['spec'] })).map((r) => `${r.ns}/${r.name}`));
  let announced!: () => void;
  const allAnnounced = new Promise<void>((resolve) => (announced = resolve));
  if (!awaited.size) announced();
  if (!wanted.size) return { watching: Promise.resolve(), allAnnounced };
  const current = new Map<string, ServiceLike>();
  const ready = new Map<string, number>();
  const told = new Set<string>();
  const keyOf = (o: { metadata?: { namespace?: string; name?: string } }) => `${o.metadata?.namespace ?? 'default'}/${o.metadata?.name ?? ''}`;
  const check = (key: string) => {
    const svc = current.get(key);
    if (!svc || told.has(key) || !(ready.get(key) ?? 0)) return;
    if (svc.spec?.type === 'LoadBalancer' && !svc.status?.loadBalancer?.ingress?.length) return;
    const line = serviceReachableLine(svc, nodePortAddresses);
    if (!line) return;
    told.add(key);
    say(line);
    awaited.delete(key);
    if (!awaited.size) announced();
  };
  const watching = Promise.all([
    followWatch<ServiceLike>(
      root,
      '/api/v1/services?watch=1',
      (l) => {
        const key = keyOf(l.object);
        if (!wanted.has(key)) return;
        if (l.type === 'DELETED') current.delete(key);
        else if (l.type === 'ADDED' || l.type === 'MODIFIED') current.set(key, l.object);
        check(key);
      },
      signal,
    ),
    followWatch<EndpointsLike & { metadata?: { namespace?: string; name?: string } }>(
      root,
      '/api/v1/endpoints?watch=1',
      (l) => {
        const key = keyOf(l.object);
        if (!wanted.has(key)) return;
        ready.set(key, l.type === 'DELETED' ? 0 : readyCount(l.object));
        check(key);
      },
      signal,
    ),
  ]).then(() => undefined);
  return { watching, allAnnounced };
}
