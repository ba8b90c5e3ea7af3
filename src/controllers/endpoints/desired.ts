// What a Service's Endpoints and EndpointSlices should hold, computed from its pods as the
// endpoints and endpointslice controllers do (pkg/controller/endpoint, pkg/controller/endpointslice,
// pkg/api/v1/endpoints RepackSubsets; podutil.FindPort for a named targetPort): Ready pods are
// addresses, the others notReadyAddresses (slices: conditions ready/serving/terminating).

import type { ObjectReference, Pod } from '../../api/types.js';
import type { ServiceLike, ServicePortLike } from '../../api/validation/service.js';

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

/** One EndpointSlice's content: the endpoints that share a set of ports. */
export interface SliceContent {
  ports: EndpointPort[];
  endpoints: SliceEndpoint[];
}

/** The pod's Ready condition (the readiness the agent reports). */
export function podReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** A label selector of map form matches (an empty or absent one matches nothing for Services). */
export function selectorMatches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels?.[k] === v);
}

/** Services whose endpoints the controllers keep: a selector, and not ExternalName. */
export function managedService(svc: ServiceLike): boolean {
  return Object.keys(svc.spec?.selector ?? {}).length > 0 && svc.spec?.type !== 'ExternalName';
}

/** podutil.FindPort: a number as it is, a name looked up among the pod's container ports of that protocol. */
export function findPort(pod: Pod, port: ServicePortLike): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  if (/^[0-9]+$/.test(target)) return Number(target);
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.name === target && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP')) return p.containerPort;
  return undefined;
}

/** Pods a Service selects that can be endpoints: an IP, not finished, and not terminating unless kept (ShouldPodBeInEndpoints). */
function candidatePods(svc: ServiceLike, pods: readonly Pod[], includeTerminating: boolean): Pod[] {
  return pods
    .filter((p) => p.metadata?.namespace === svc.metadata?.namespace && selectorMatches(svc.spec?.selector, p.metadata?.labels))
    .filter((p) => !!p.status?.podIP && p.status.phase !== 'Succeeded' && p.status.phase !== 'Failed')
    .filter((p) => includeTerminating || !p.metadata?.deletionTimestamp)
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

function address(pod: Pod, svc: ServiceLike): EndpointAddress {
  const a: EndpointAddress = {
    ip: pod.status!.podIP!,
    targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
  };
  if (pod.spec?.nodeName) a.nodeName = pod.spec.nodeName;
  if (pod.spec?.hostname && pod.spec.subdomain === svc.metadata?.name) a.hostname = pod.spec.hostname;
  return a;
}

/** The resolved ports of a pod for the Service; a port whose name the pod lacks is left out. */
function podPorts(pod: Pod, svc: ServiceLike): EndpointPort[] {
  const out: EndpointPort[] = [];
  for (const sp of svc.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    const ep: EndpointPort = { port, protocol: sp.protocol ?? 'TCP' };
    if (sp.name) ep.name = sp.name;
    if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
    out.push(ep);
  }
  return out;
}

/** A key equal for equal port sets, whatever their order. */
export const endpointPortsKey = (ports: readonly EndpointPort[]) => JSON.stringify(ports.map((p) => [p.name ?? '', p.port, p.protocol]).sort());

/** Endpoints.subsets: pods grouped by their resolved ports (RepackSubsets), Ready ones in addresses. */
export function desiredSubsets(svc: ServiceLike, pods: readonly Pod[]): EndpointSubset[] {
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  const headlessNoPorts = svc.spec?.clusterIP === 'None' && (svc.spec?.ports ?? []).length === 0;
  const groups = new Map<string, EndpointSubset>();
  for (const pod of candidatePods(svc, pods, publishNotReady)) {
    const ports = podPorts(pod, svc);
    if (ports.length === 0 && !headlessNoPorts) continue;
    const k = endpointPortsKey(ports);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = ports.length ? { ports } : {}));
    const field = publishNotReady || podReady(pod) ? 'addresses' : 'notReadyAddresses';
    (g[field] ??= []).push(address(pod, svc));
  }
  const byIP = (a: EndpointAddress, b: EndpointAddress) => a.ip.localeCompare(b.ip) || (a.targetRef?.name ?? '').localeCompare(b.targetRef?.name ?? '');
  return [...groups.values()].map((g) => {
    g.addresses?.sort(byIP);
    g.notReadyAddresses?.sort(byIP);
    g.ports?.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.port - b.port);
    return g;
  });
}

/** EndpointSlice contents: one per set of resolved ports, terminating pods kept with their conditions. */
export function desiredSlices(svc: ServiceLike, pods: readonly Pod[]): SliceContent[] {
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  const groups = new Map<string, SliceContent>();
  for (const pod of candidatePods(svc, pods, true)) {
    const ports = podPorts(pod, svc);
    if (ports.length === 0 && (svc.spec?.ports ?? []).length > 0) continue;
    const k = endpointPortsKey(ports);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { ports, endpoints: [] }));
    const terminating = !!pod.metadata?.deletionTimestamp;
    const serving = podReady(pod);
    const a = address(pod, svc);
    const e: SliceEndpoint = {
      addresses: [a.ip],
      conditions: { ready: publishNotReady || (serving && !terminating), serving, terminating },
    };
    if (a.hostname) e.hostname = a.hostname;
    if (a.nodeName) e.nodeName = a.nodeName;
    e.targetRef = a.targetRef!;
    g.endpoints.push(e);
  }
  return [...groups.values()];
}
