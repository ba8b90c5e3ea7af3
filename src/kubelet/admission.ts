// Pod admission as the kubelet's predicate admit handler does it (pkg/kubelet/lifecycle/predicate.go on
// top of the scheduler's AdmissionCheck): resources fit node allocatable, declared host ports are free.

import type { Container, ContainerPort, Pod } from '../api/types.js';
import { parseQuantity } from '../api/quantity.js';
import type { AdmitResult } from './types.js';

/** What the node offers to pods (allocatable); `pods` defaults to the kubelet's maxPods, 110. */
export interface NodeAllocatable {
  cpuMilli: number;
  memoryBytes: number;
  pods?: number;
}

/** The kubelet's default `maxPods`. */
export const DEFAULT_MAX_PODS = 110;

/** The effective requests of a pod, in the units the scheduler compares (millicores, bytes). */
export interface PodRequests {
  cpuMilli: number;
  memoryBytes: number;
}

// Reason strings of predicate.go.
export const OutOfCPU = 'OutOfcpu';
export const OutOfMemory = 'OutOfmemory';
export const OutOfPods = 'OutOfpods';
/** The scheduler plugin name that becomes the rejection reason for a host-port conflict. */
export const NodePortsPredicate = 'NodePorts';
export const NodePortsErrReason = "node(s) didn't have free ports for the requested pod ports";

const bindAllHostIP = '0.0.0.0';

/**
 * Decides whether `pod` may run next to the `admitted` pods on a node with `node` allocatable. The
 * first failing check wins, in the scheduler's order: pod count, cpu, memory, then host ports.
 */
export function admitPod(pod: Pod, admitted: Pod[], node: NodeAllocatable): AdmitResult {
  const insufficient = fitsRequest(podRequests(pod), admitted, node);
  if (insufficient) {
    return {
      admit: false,
      reason: outOfReason(insufficient.resource),
      message: insufficientResourceMessage(insufficient),
    };
  }
  if (!fitsPorts(pod, admitted)) {
    return {
      admit: false,
      reason: NodePortsPredicate,
      message: `Predicate ${NodePortsPredicate} failed: ${NodePortsErrReason}`,
    };
  }
  return { admit: true };
}

interface InsufficientResource {
  resource: 'pods' | 'cpu' | 'memory';
  requested: number;
  used: number;
  capacity: number;
}

function outOfReason(resource: InsufficientResource['resource']): string {
  switch (resource) {
    case 'cpu':
      return OutOfCPU;
    case 'memory':
      return OutOfMemory;
    case 'pods':
      return OutOfPods;
  }
}

/** InsufficientResourceError.Error() of predicate.go. */
function insufficientResourceMessage(r: InsufficientResource): string {
  return `Node didn't have enough resource: ${r.resource}, requested: ${r.requested}, used: ${r.used}, capacity: ${r.capacity}`;
}

/** noderesources.fitsRequest, reduced to the resources this node tracks; the first failure only. */
function fitsRequest(request: PodRequests, admitted: Pod[], node: NodeAllocatable): InsufficientResource | undefined {
  const allowedPods = node.pods ?? DEFAULT_MAX_PODS;
  if (admitted.length + 1 > allowedPods) {
    return { resource: 'pods', requested: 1, used: admitted.length, capacity: allowedPods };
  }
  if (request.cpuMilli === 0 && request.memoryBytes === 0) return undefined;

  const used: PodRequests = { cpuMilli: 0, memoryBytes: 0 };
  for (const p of admitted) {
    const r = podRequests(p);
    used.cpuMilli += r.cpuMilli;
    used.memoryBytes += r.memoryBytes;
  }
  if (request.cpuMilli > 0 && request.cpuMilli > node.cpuMilli - used.cpuMilli) {
    return { resource: 'cpu', requested: request.cpuMilli, used: used.cpuMilli, capacity: node.cpuMilli };
  }
  if (request.memoryBytes > 0 && request.memoryBytes > node.memoryBytes - used.memoryBytes) {
    return { resource: 'memory', requested: request.memoryBytes, used: used.memoryBytes, capacity: node.memoryBytes };
  }
  return undefined;
}

type ResourceMap = Partial<Record<string, unknown>>;

/** A request for one resource, falling back to the limit as API defaulting does. */
function requestOf(resources: { requests?: ResourceMap; limits?: ResourceMap } | undefined, name: 'cpu' | 'memory'): number {
  const q = resources?.requests?.[name] ?? resources?.limits?.[name];
  if (q === undefined || q === null || q === '') return 0;
  const quantity = parseQuantity(String(q));
  return Number(name === 'cpu' ? quantity.milliValue() : quantity.value());
}

function containerRequests(c: Container): PodRequests {
  return { cpuMilli: requestOf(c.resources, 'cpu'), memoryBytes: requestOf(c.resources, 'memory') };
}

function add(into: PodRequests, r: PodRequests): void {
  into.cpuMilli += r.cpuMilli;
  into.memoryBytes += r.memoryBytes;
}

function maxInto(into: PodRequests, r: PodRequests): void {
  into.cpuMilli = Math.max(into.cpuMilli, r.cpuMilli);
  into.memoryBytes = Math.max(into.memoryBytes, r.memoryBytes);
}

export function isRestartableInitContainer(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

/**
 * resourcehelper.PodRequests: the sum of the app containers and sidecars, or, when larger, what any
 * init container needs while it runs (itself plus the sidecars started before it); then pod-level
 * requests where set, then the pod overhead.
 */
export function podRequests(pod: Pod): PodRequests {
  const spec = pod.spec;
  const reqs: PodRequests = { cpuMilli: 0, memoryBytes: 0 };
  for (const c of spec?.containers ?? []) add(reqs, containerRequests(c));

  const sidecarsSoFar: PodRequests = { cpuMilli: 0, memoryBytes: 0 };
  const initPeak: PodRequests = { cpuMilli: 0, memoryBytes: 0 };
  for (const c of spec?.initContainers ?? []) {
    const own = containerRequests(c);
    if (isRestartableInitContainer(c)) {
      // A sidecar keeps running beside everything after it: it counts towards the pod total and
      // towards what every later init container sees.
      add(reqs, own);
      add(sidecarsSoFar, own);
      maxInto(initPeak, sidecarsSoFar);
    } else {
      maxInto(initPeak, { cpuMilli: own.cpuMilli + sidecarsSoFar.cpuMilli, memoryBytes: own.memoryBytes + sidecarsSoFar.memoryBytes });
    }
  }
  maxInto(reqs, initPeak);

  // Pod-level resources (PodLevelResources, on by default) replace the aggregate where set.
  const podLevel = (spec as { resources?: { requests?: ResourceMap; limits?: ResourceMap } } | undefined)?.resources;
  for (const name of ['cpu', 'memory'] as const) {
    if (podLevel?.requests?.[name] !== undefined || podLevel?.limits?.[name] !== undefined) {
      const v = requestOf(podLevel, name);
      if (name === 'cpu') reqs.cpuMilli = v;
      else reqs.memoryBytes = v;
    }
  }

  const overhead = spec?.overhead as ResourceMap | undefined;
  if (overhead) add(reqs, { cpuMilli: requestOf({ requests: overhead }, 'cpu'), memoryBytes: requestOf({ requests: overhead }, 'memory') });
  return reqs;
}

/** One host port a pod binds. */
export interface HostPort {
  hostIP: string;
  protocol: string;
  port: number;
}

/** Sidecars, then app containers: what runs alongside for the life of the pod (plain init containers do not). */
function longRunningContainers(pod: Pod): Container[] {
  return [...(pod.spec?.initContainers ?? []).filter(isRestartableInitContainer), ...(pod.spec?.containers ?? [])];
}

/**
 * The host ports a pod declares, as the scheduler's GetHostPorts collects them: each port's hostPort,
 * and on a hostNetwork pod its containerPort (v1 defaulting makes it the hostPort there). What the
 * kubelet's NodePorts admission compares.
 */
export function hostPorts(pod: Pod): HostPort[] {
  const hostNetwork = pod.spec?.hostNetwork === true;
  const out: HostPort[] = [];
  for (const c of longRunningContainers(pod)) {
    for (const p of c.ports ?? []) {
      const port = p.hostPort && p.hostPort > 0 ? p.hostPort : hostNetwork ? p.containerPort : 0;
      if (!port || port <= 0) continue;
      out.push(sanitize(p, port));
    }
  }
  return out;
}

/**
 * The ports a pod's processes bind on the host: its declared host ports and, on a runtime whose pods
 * share the host's network (`network: 'host'`, the process runtime), every containerPort as well.
 */
export function boundHostPorts(pod: Pod, network: 'host' | 'pod'): HostPort[] {
  if (network !== 'host') return hostPorts(pod);
  const out: HostPort[] = [];
  for (const c of longRunningContainers(pod)) {
    for (const p of c.ports ?? []) {
      const port = p.hostPort && p.hostPort > 0 ? p.hostPort : p.containerPort;
      if (port && port > 0) out.push(sanitize(p, port));
    }
  }
  return out;
}

function sanitize(p: ContainerPort, port: number): HostPort {
  return { hostIP: p.hostIP || bindAllHostIP, protocol: p.protocol || 'TCP', port };
}

/** HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every address, others with themselves and 0.0.0.0. */
export function portsConflict(a: HostPort, b: HostPort): boolean {
  if (a.protocol !== b.protocol || a.port !== b.port) return false;
  return a.hostIP === bindAllHostIP || b.hostIP === bindAllHostIP || a.hostIP === b.hostIP;
}

/** nodeports.Fits, plus the within-pod uniqueness API validation would enforce for host ports. */
function fitsPorts(pod: Pod, admitted: Pod[]): boolean {
  const used: HostPort[] = admitted.flatMap(hostPorts);
  for (const want of hostPorts(pod)) {
    if (used.some((u) => portsConflict(u, want))) return false;
    used.push(want);
  }
  return true;
}
