// The Node object and its status as the kubelet's node status setters build them (capacity and
// allocatable, addresses, nodeInfo, daemon endpoints, the four conditions with heartbeat times), the
// --node-labels and --register-with-taints syntax, and the reporter that registers the Node and then
// patches nodes/<name>/status every --node-status-update-frequency.

import { readFileSync } from 'node:fs';
import { arch, hostname, release } from 'node:os';
import type { Node, NodeCondition, NodeSystemInfo, Taint } from 'kubernetes-types/core/v1.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { toRFC3339 } from '../status/time.js';
import { isConflict, isRetriable, RetryBackoff, STRATEGIC_MERGE_PATCH, type ApiClient } from './client.js';

/** The kubelet's --node-status-update-frequency default. */
export const DEFAULT_NODE_STATUS_UPDATE_FREQUENCY_MS = 10_000;
/** The kubelet's default port, served as daemonEndpoints.kubeletEndpoint.Port. */
export const DEFAULT_KUBELET_PORT = 10250;

export interface NodeSpecOptions {
  nodeName: string;
  /** InternalIP; the Hostname address is the host's name. */
  internalIP: string;
  hostname?: string;
  kubeletPort: number;
  /** Milli-CPUs, bytes, pod count. */
  capacity: { cpuMilli: number; memoryBytes: number; pods: number };
  /** Defaults to capacity. */
  allocatable?: { cpuMilli: number; memoryBytes: number; pods: number };
  labels?: Record<string, string>;
  taints?: Taint[];
  /** `podvisor/<version>` */
  kubeletVersion: string;
  /** `<runtime>://<version>`, e.g. `process://0.1.0` */
  containerRuntimeVersion: string;
}

/** Go's GOARCH names for Node's process.arch values. */
export function goArch(a: string = arch()): string {
  return ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' } as Record<string, string>)[a] ?? a;
}

function readTrimmed(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readTrimmed('/etc/os-release'));
  return m?.[1] ?? 'Unknown';
}

/** nodeInfo as the kubelet's machine info setter fills it. */
export function systemInfo(kubeletVersion: string, containerRuntimeVersion: string): NodeSystemInfo {
  return {
    architecture: goArch(),
    bootID: readTrimmed('/proc/sys/kernel/random/boot_id'),
    containerRuntimeVersion,
    kernelVersion: release(),
    kubeProxyVersion: '',
    kubeletVersion,
    machineID: readTrimmed('/etc/machine-id'),
    operatingSystem: process.platform,
    osImage: osImage(),
    systemUUID: readTrimmed('/sys/class/dmi/id/product_uuid'),
  };
}

/**
 * Parses --node-labels (`k=v,k2=v2`). Throws with the kubelet's wording for a malformed pair; label
 * key and value syntax is left to the API server, which rejects a bad one with its own message.
 */
export function parseNodeLabels(spec: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`invalid label "${part}": must be key=value`);
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** Parses --register-with-taints (`key=value:Effect,key:Effect`), as taints.ParseTaints does. */
export function parseTaints(spec: string): Taint[] {
  const out: Taint[] = [];
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = part.lastIndexOf(':');
    if (colon < 0) throw new Error(`invalid taint spec: ${part}`);
    const effect = part.slice(colon + 1);
    if (!taintEffects.includes(effect)) {
      throw new Error(`invalid taint effect: ${effect}, unsupported taint effect`);
    }
    const kv = part.slice(0, colon);
    const eq = kv.indexOf('=');
    const key = eq >= 0 ? kv.slice(0, eq) : kv;
    if (!key) throw new Error(`invalid taint spec: ${part}`);
    const taint: Taint = { key, effect };
    if (eq >= 0) taint.value = kv.slice(eq + 1);
    out.push(taint);
  }
  return out;
}

function resources(r: { cpuMilli: number; memoryBytes: number; pods: number }): Record<string, string> {
  const cpu = r.cpuMilli % 1000 === 0 ? String(r.cpuMilli / 1000) : `${r.cpuMilli}m`;
  const mem = r.memoryBytes % 1024 === 0 ? `${r.memoryBytes / 1024}Ki` : String(r.memoryBytes);
  return { cpu, memory: mem, pods: String(r.pods) };
}

/** The labels the kubelet puts on its own Node, then the --node-labels. */
export function nodeLabels(opts: NodeSpecOptions): Record<string, string> {
  const os = process.platform;
  const a = goArch();
  return {
    'beta.kubernetes.io/arch': a,
    'beta.kubernetes.io/os': os,
    'kubernetes.io/arch': a,
    'kubernetes.io/hostname': opts.nodeName,
    'kubernetes.io/os': os,
    ...(opts.labels ?? {}),
  };
}

type Pressure = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** Whether the node is ready, and the pressure conditions the eviction manager holds (DiskPressure). */
export interface NodeReadiness {
  ready: boolean;
  message?: string;
  pressure?: readonly string[];
}
/** The reason and message of each pressure condition while it holds (the kubelet's node status setters). */
const pressureOnWords: Record<Pressure, [string, string]> = {
  MemoryPressure: ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available'],
  DiskPressure: ['KubeletHasDiskPressure', 'kubelet has disk pressure'],
  PIDPressure: ['KubeletHasInsufficientPID', 'kubelet has insufficient PID available'],
};
const pressureWords: Record<Pressure, [string, string]> = {
  MemoryPressure: ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  DiskPressure: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  PIDPressure: ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
};

/**
 * The four conditions at `now`: every heartbeat is now, each transition time carried over from the
 * previous conditions while the status is unchanged.
 */
export function nodeConditions(now: number, previous: NodeCondition[] | undefined, ready: NodeReadiness): NodeCondition[] {
  const t = toRFC3339(now);
  const make = (type: string, status: string, reason: string, message: string): NodeCondition => {
    const old = previous?.find((c) => c.type === type);
    const transition = old && old.status === status && old.lastTransitionTime ? old.lastTransitionTime : t;
    return { type, status, reason, message, lastHeartbeatTime: t, lastTransitionTime: transition };
  };
  const out = (Object.keys(pressureWords) as Pressure[]).map((p) =>
    ready.pressure?.includes(p) ? make(p, 'True', ...pressureOnWords[p]) : make(p, 'False', ...pressureWords[p]),
  );
  out.push(
    ready.ready
      ? make('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status')
      : make('Ready', 'False', 'KubeletNotReady', ready.message ?? 'container runtime is down'),
  );
  return out;
}

/** The Node as the kubelet first registers it (initialNode plus the status setters). */
export function buildNode(opts: NodeSpecOptions, now: number): Node {
  const node: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: opts.nodeName,
      labels: nodeLabels(opts),
      annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: opts.taints?.length ? { taints: opts.taints } : {},
    status: nodeStatus(opts, now, undefined, { ready: true }),
  };
  return node;
}

export function nodeStatus(opts: NodeSpecOptions, now: number, previous: NodeCondition[] | undefined, ready: NodeReadiness): NonNullable<Node['status']> {
  return {
    addresses: [
      { type: 'InternalIP', address: opts.internalIP },
      { type: 'Hostname', address: opts.hostname ?? hostname() },
    ],
    allocatable: resources(opts.allocatable ?? opts.capacity),
    capacity: resources(opts.capacity),
    conditions: nodeConditions(now, previous, ready),
    daemonEndpoints: { kubeletEndpoint: { Port: opts.kubeletPort } },
    nodeInfo: systemInfo(opts.kubeletVersion, opts.containerRuntimeVersion),
  };
}

export interface NodeStatusReporterOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  spec: NodeSpecOptions;
  /** --node-status-update-frequency; 10 s when unset. */
  updateFrequencyMs?: number;
  /** Whether the node is ready now (e.g. the runtime answers); ready when unset. */
  readiness?: () => Promise<NodeReadiness>;
}

/**
 * Registers the Node (creating it, or taking over an existing one of the same name as the kubelet's
 * tryRegisterWithAPIServer does), then keeps its status fresh. Every failure is retried: registration
 * with back-off, status at the next tick.
 */
export class NodeStatusReporter {
  private readonly o: NodeStatusReporterOptions;
  private readonly backoff = new RetryBackoff();
  private conditions?: NodeCondition[];
  private timer?: Timer;
  private stopped = false;
  private registered = false;
  private uid?: string;
  private readonly registeredWaiters: Array<(uid: string) => void> = [];
  /** Number of status updates the API server accepted (for tests and measurement). */
  updates = 0;

  constructor(opts: NodeStatusReporterOptions) {
    this.o = opts;
  }

  start(): void {
    void this.tick();
  }

  /** Resolves with the Node's uid once it is registered. */
  whenRegistered(): Promise<string> {
    if (this.uid) return Promise.resolve(this.uid);
    return new Promise((r) => this.registeredWaiters.push(r));
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Asks for a status update now (e.g. after the API server came back). */
  nudge(): void {
    if (!this.registered || this.stopped) return;
    this.timer?.cancel();
    void this.tick();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let delay = this.o.updateFrequencyMs ?? DEFAULT_NODE_STATUS_UPDATE_FREQUENCY_MS;
    try {
      if (!this.registered) await this.register();
      else await this.updateStatus();
      this.backoff.reset();
    } catch (err) {
      if (this.stopped) return;
      this.o.logger.warn(this.registered ? 'Error updating node status, will retry' : 'Unable to register node with API server', {
        node: this.o.spec.nodeName,
        err: (err as Error).message,
      });
      if (!this.registered) delay = this.backoff.next();
    }
    if (!this.stopped) this.timer = this.o.clock.setTimer(delay, () => void this.tick());
  }

  private async readiness(): Promise<NodeReadiness> {
    try {
      return (await this.o.readiness?.()) ?? { ready: true };
    } catch (err) {
      return { ready: false, message: (err as Error).message };
    }
  }

  private async register(): Promise<void> {
    const { client, spec, clock } = this.o;
    const node = buildNode(spec, clock.now());
    node.status!.conditions = nodeConditions(clock.now(), undefined, await this.readiness());
    let created: Node;
    try {
      created = await client.request<Node>('POST', '/api/v1/nodes', { body: node });
    } catch (err) {
      if (!isConflict(err)) throw err;
      // Already there (a restart, or an earlier registration): reconcile our labels, then report
      // status over it. Taints stay as they are: NodeRestriction forbids a node to change its own.
      const patch = { metadata: { labels: node.metadata!.labels } };
      created = await client.request<Node>('PATCH', `/api/v1/nodes/${encodeURIComponent(spec.nodeName)}`, { body: patch, contentType: STRATEGIC_MERGE_PATCH });
      this.conditions = created.status?.conditions;
      this.registered = true;
      await this.updateStatus();
    }
    this.conditions ??= created.status?.conditions;
    this.registered = true;
    this.uid = created.metadata?.uid ?? '';
    this.o.logger.info('Successfully registered node', { node: spec.nodeName });
    for (const w of this.registeredWaiters.splice(0)) w(this.uid);
  }

  private async updateStatus(): Promise<void> {
    const { client, spec, clock } = this.o;
    const status = nodeStatus(spec, clock.now(), this.conditions, await this.readiness());
    try {
      const node = await client.request<Node>('PATCH', `/api/v1/nodes/${encodeURIComponent(spec.nodeName)}/status`, {
        body: { status },
        contentType: STRATEGIC_MERGE_PATCH,
      });
      this.conditions = node.status?.conditions ?? status.conditions;
      this.updates++;
    } catch (err) {
      // The Node was deleted under us: register it again, as the kubelet does after a restart.
      if (!isRetriable(err) && (err as { code?: number }).code === 404) this.registered = false;
      throw err;
    }
  }
}
