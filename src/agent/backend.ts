// The agent's KubeBackend: what the Kubernetes API layer serves, over the pod registry (pods, events,
// watches), the API's write rules (api-pods.ts), the container streams and the usage collector.

import { crdWarnings } from '../kubeapi/apiextensions/crd-strategy.js';
import { randomUUID } from 'node:crypto';
import type { Event, Pod } from '../api/types.js';
import { canonicalJSON } from '../api/defaults.js';
import type { CreateOptions, DeleteOptions, KubeBackend, KubeObject, ListResult, Watch, WatchEvent } from '../kubeapi/backend.js';
import { formatFieldError } from '../api/field-errors.js';
import { capabilitiesFor, runtimeObjectRules, runtimeObjectWarnings, type PodCapabilities } from '../runtime/pod-rules.js';
import type { RuntimeClass } from '../api/validation/node.js';
import { detectRuntimeHost } from '../runtime/process-runtime.js';
import { alreadyExists, ApiError, conflict, invalid, staleObject } from '../http/status.js';
import { decodeAPIPod, validatePodUpdate } from './api-pods.js';
import { admitPodPriority, keepPodPriority } from './priority-admission.js';
import { notFound, type PodRegistry } from './pod-registry.js';
import type { PodStreams } from './pod-streams.js';
import { PodStreamsBackend } from './pod-streams-backend.js';
import type { UsageCollector } from './usage.js';
import { ObjectStore, serverMetadata } from './object-store.js';
import { OneAtATime } from '../util/one-at-a-time.js';
import { sleepLong } from '../util/timer.js';
import { admitServiceAccount, lookupServiceAccount } from '../kubeapi/serviceaccount/admission.js';
import type { ServiceAccount } from '../api/service-account.js';
import type { ServiceAccountTokens } from '../kubeapi/serviceaccount/tokens.js';
import { admitPodLimits } from '../kubeapi/limit-ranger.js';
import { QuotaAdmission } from '../kubeapi/quota-admission.js';
import type { LimitRange } from '../api/validation/limit-range.js';

export interface AgentBackendDeps {
  nodeName: string;
  /** What each pod's runtime can do (chosen by its RuntimeClass on an agent of several runtimes). */
  runtimeCapabilities: PodCapabilities;
  registry: PodRegistry;
  streams: PodStreams;
  usage: UsageCollector;
  /** Kinds kept as plain objects (ConfigMaps, Secrets; the kubelet's lookup should be the same store); memory-only by default. */
  objects?: ObjectStore;
  /** Warnings about a written object of the store (a Service's nodePort another process of the host holds). */
  objectWarnings?: (written: KubeObject) => string[];
  /** Signs and checks bound service-account tokens (TokenRequest, TokenReview). */
  serviceAccountTokens?: ServiceAccountTokens;
  /** Waits, on the agent's clock (the admission's look-ups of a `default` account not made yet). */
  sleep?: (ms: number) => Promise<void>;
}

export class AgentBackend extends PodStreamsBackend implements KubeBackend {
  readonly nodeName: string;
  readonly objects: ObjectStore;
  readonly serviceAccountTokens?: ServiceAccountTokens;
  private readonly d: AgentBackendDeps;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly podWrites = new OneAtATime();
  private unhonoured?: (obj: KubeObject) => string[];
  private readonly quota: QuotaAdmission;

  constructor(deps: AgentBackendDeps) {
    super(deps.streams, deps.usage);
    this.d = deps;
    this.nodeName = deps.nodeName;
    this.objects = deps.objects ?? new ObjectStore();
    if (deps.serviceAccountTokens) this.serviceAccountTokens = deps.serviceAccountTokens;
    this.sleep = deps.sleep ?? ((ms) => sleepLong(ms));
    // Objects are created only in namespaces that exist; a static pod's namespace exists by its pod.
    this.objects.enforceNamespaceLifecycle(() => deps.registry.namespaces());
    this.quota = new QuotaAdmission(this);
    const quotaKind = (s: { resource: string; apiVersion: string }) => ({
      resource: s.resource,
      group: s.apiVersion.includes('/') ? s.apiVersion.split('/')[0]! : '',
    });
    this.objects.admitCreates((strategy, obj, opts) => this.quota.admitCreate(quotaKind(strategy), obj, opts));
    this.objects.admitUpdates((strategy, obj, old, opts) => this.quota.admitUpdate(quotaKind(strategy), obj, old, opts));
  }

  /**
   * A Pod or workload this agent's runtime cannot run as written, or runs without some of its fields:
   * the runtime's rules (runtime/pod-rules.ts) on the pod or the workload's template, as warnings. A
   * Pod that breaks a rule is refused before (decodeAPIPod); a workload is stored, as the API server
   * stores it, and its pods are refused when its controller creates them.
   */
  writeWarnings(written: KubeObject): string[] {
    const caps = this.d.runtimeCapabilities;
    this.unhonoured ??= runtimeObjectWarnings(caps, detectRuntimeHost());
    return [
      ...runtimeObjectRules(caps)(written).map(formatFieldError),
      ...this.unhonoured(written),
      ...this.tokenVolumeWarnings(written),
      ...(this.d.objectWarnings?.(written) ?? []),
      ...crdWarnings(written),
    ];
  }

  /**
   * A Pod that asks for its service-account token to be mounted (automountServiceAccountToken: true,
   * on the pod or its account) on a runtime that mounts no volumes runs without it: said, not silent.
   */
  private tokenVolumeWarnings(written: KubeObject): string[] {
    if (written.kind !== 'Pod' || capabilitiesFor(this.d.runtimeCapabilities, written as Pod).mounts) return [];
    const spec = (written as Pod).spec;
    const sa = this.objects.get('ServiceAccount', written.metadata?.namespace ?? 'default', spec?.serviceAccountName || 'default') as
      ServiceAccount | undefined;
    if ((spec?.automountServiceAccountToken ?? sa?.automountServiceAccountToken) !== true) return [];
    return [
      'spec.automountServiceAccountToken: not honoured by the process runtime: no volume is mounted into a host process, so the token is not at /var/run/secrets/kubernetes.io/serviceaccount; use --runtime=containerd',
    ];
  }

  listPods(): ListResult<Pod> {
    return this.d.registry.list();
  }

  getPod(namespace: string, name: string): Pod | undefined {
    return this.d.registry.get(namespace, name);
  }

  async createPod(raw: Pod, opts: CreateOptions = {}): Promise<Pod> {
    const { pod } = decodeAPIPod(raw, {
      nodeName: this.nodeName,
      capabilities: this.d.runtimeCapabilities,
      runtimeClass: (name) => this.objects.get('RuntimeClass', '', name) as RuntimeClass | undefined,
      uid: randomUUID(),
      fields: opts,
      admit: (p) => admitPodLimits(p, (this.objects.storage('LimitRange')?.list().items ?? []) as LimitRange[]),
      admitPriority: (p) => admitPodPriority(p, this.objects.storage('PriorityClass')),
    });
    const name = pod.metadata?.name ?? '';
    this.objects.admitToNamespace({ resource: 'pods' }, pod.metadata?.namespace ?? 'default', name);
    if (this.objects.storage('ServiceAccount')) {
      const ns = pod.metadata?.namespace ?? 'default';
      const get = (n: string, a: string) => this.objects.get('ServiceAccount', n, a) as ServiceAccount | undefined;
      const sa = await lookupServiceAccount(get, ns, pod.spec?.serviceAccountName || pod.spec?.serviceAccount || 'default', this.sleep);
      admitServiceAccount(pod, {
        serviceAccount: () => sa,
        // The token volume only where the runtime mounts volumes and this agent issues tokens to fill it.
        mountsVolumes: capabilitiesFor(this.d.runtimeCapabilities, pod).mounts && this.serviceAccountTokens !== undefined,
      });
    }
    if (this.d.registry.get(pod.metadata?.namespace ?? 'default', name)) {
      throw alreadyExists('pods', name);
    }
    const created = opts.managedFields?.(pod as KubeObject, undefined);
    if (created && created.length > 0) (pod.metadata as { managedFields?: unknown[] }).managedFields = created;
    await this.quota.admitCreate({ resource: 'pods', group: '' }, pod as KubeObject, opts);
    if (opts.dryRun) return { apiVersion: 'v1', kind: 'Pod', ...pod, status: { phase: 'Pending' } } as Pod;
    return this.d.registry.add(pod, { source: 'api', from: 'api' });
  }

  /**
   * Updates of one pod, one at a time: each reads the stored pod, checks its resourceVersion and
   * stores the result before the next reads, so two writes sent together cannot both pass the check
   * against the same version and the first be lost.
   */
  updatePod(raw: Pod, opts: CreateOptions = {}): Promise<Pod> {
    const ns = raw.metadata?.namespace || 'default';
    return this.podWrites.run(`${ns}/${raw.metadata?.name ?? ''}`, () => this.updatePodNow(raw, opts));
  }

  private async updatePodNow(raw: Pod, opts: CreateOptions): Promise<Pod> {
    const ns = raw.metadata?.namespace || 'default';
    const name = raw.metadata?.name ?? '';
    const current = this.d.registry.get(ns, name);
    if (!current) throw notFound(name);
    const rv = raw.metadata?.resourceVersion;
    const uid = raw.metadata?.uid;
    if ((rv && rv !== current.metadata?.resourceVersion) || (uid && uid !== current.metadata?.uid)) {
      throw conflict('pods', name, staleObject);
    }
    if (this.d.registry.origin(ns, name)?.source !== 'api') {
      throw new ApiError(403, 'Forbidden', `pods ${JSON.stringify(name)} is forbidden: a static pod is changed through its source`, { name, kind: 'pods' });
    }
    const { pod } = decodeAPIPod(raw, {
      nodeName: this.nodeName,
      capabilities: this.d.runtimeCapabilities,
      uid: current.metadata!.uid!,
      fields: opts,
      admitPriority: (p) => keepPodPriority(p, current),
    });
    (pod.metadata as { creationTimestamp?: string }).creationTimestamp = current.metadata?.creationTimestamp;
    if (!pod.spec!.nodeName && current.spec?.nodeName) pod.spec!.nodeName = current.spec.nodeName;
    const managed = opts.managedFields ? opts.managedFields(pod as KubeObject, current as KubeObject) : current.metadata?.managedFields;
    if (managed && managed.length > 0) (pod.metadata as { managedFields?: unknown[] }).managedFields = managed;
    const errs = validatePodUpdate(pod, current);
    if (errs.length > 0) throw invalid('Pod', name, errs);
    if (sameWritableContent(pod, current) || opts.dryRun) return current;
    return this.d.registry.update(pod);
  }

  deletePod(namespace: string, name: string, opts: DeleteOptions = {}): Promise<Pod> {
    return this.d.registry.delete(namespace, name, opts);
  }

  /** The eviction API: the pod marked DisruptionTarget (EvictionByEvictionAPI), then deleted gracefully. */
  async evictPod(namespace: string, name: string, opts: DeleteOptions = {}): Promise<Pod> {
    const pod = this.d.registry.get(namespace, name);
    if (pod && !opts.dryRun && this.d.registry.origin(namespace, name)?.source === 'api')
      this.d.registry.markDisruptionTarget(pod.metadata?.uid ?? '', 'EvictionByEvictionAPI', 'Eviction API: evicting');
    return this.d.registry.delete(namespace, name, opts);
  }

  watchPods(resourceVersion: string, onEvent: (ev: WatchEvent<Pod>) => void): Watch {
    return this.d.registry.watchPods(resourceVersion, onEvent);
  }

  listEvents(): ListResult<Event> {
    return this.d.registry.listEvents();
  }

  watchEvents(resourceVersion: string, onEvent: (ev: WatchEvent<Event>) => void): Watch {
    return this.d.registry.watchEvents(resourceVersion, onEvent);
  }

  /** The namespaces pods use (the stored Namespaces are the object store's). */
  namespaces(): string[] {
    return this.d.registry.namespaces();
  }
}

/** The spec and the client-written metadata are unchanged: an update that changes nothing is a no-op. */
function sameWritableContent(a: Pod, b: Pod): boolean {
  const writable = (p: Pod) => {
    const meta: Record<string, unknown> = { ...(p.metadata ?? {}) };
    for (const k of serverMetadata) delete meta[k];
    for (const k of ['labels', 'annotations']) if (meta[k] && Object.keys(meta[k] as object).length === 0) delete meta[k];
    for (const k of ['ownerReferences', 'finalizers']) if (Array.isArray(meta[k]) && (meta[k] as unknown[]).length === 0) delete meta[k];
    return canonicalJSON({ spec: p.spec, metadata: meta });
  };
  return writable(a) === writable(b);
}
