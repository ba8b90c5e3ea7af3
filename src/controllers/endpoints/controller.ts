// The endpoints and endpointslice controllers of one node (pkg/controller/endpoint and
// pkg/controller/endpointslice in one loop): they watch the agent's pods and the stored Services, and
// on every change write each affected Service's Endpoints and EndpointSlices (desired.ts), so a
// readiness change reaches them as soon as the agent reports it. Services without a selector are
// left to their clients; a Service's Endpoints and slices go when it goes.

import { randomBytes } from 'node:crypto';
import type { Pod } from '../../api/types.js';
import type { ServiceLike } from '../../api/validation/service.js';
import type { KubeObject, ObjectsBackend, Storage, Watch, WatchEvent } from '../../kubeapi/backend.js';
import type { Logger } from '../../util/logger.js';
import { desiredSlices, desiredSubsets, endpointPortsKey, managedService, selectorMatches, type SliceContent } from './desired.js';

/** What the controllers read pods from (the agent's KubeBackend). */
export interface PodSource {
  watchPods(resourceVersion: string, onEvent: (ev: WatchEvent<Pod>) => void): Watch;
}

export interface EndpointsControllerDeps {
  pods: PodSource;
  objects: ObjectsBackend;
  logger: Logger;
}

/** The label naming a slice's Service, and the one naming its manager (discovery/v1). */
export const serviceNameLabel = 'kubernetes.io/service-name';
const managedByLabel = 'endpointslice.kubernetes.io/managed-by';
const managedBy = 'endpointslice-controller.k8s.io';

type SliceObject = KubeObject & { addressType?: string; endpoints?: unknown[]; ports?: unknown[] };

const keyOf = (o: { metadata?: { namespace?: string; name?: string } }) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export class EndpointsController {
  private readonly pods = new Map<string, Pod>();
  private readonly services = new Map<string, ServiceLike>();
  private readonly queue = new Set<string>();
  private running = false;
  private readonly watches: Watch[] = [];
  private readonly endpoints: Storage;
  private readonly slices: Storage;
  private readonly serviceStorage: Storage;
  /** Resolves when the queue is empty (tests and shutdown). */
  private idle: Promise<void> = Promise.resolve();

  constructor(private readonly deps: EndpointsControllerDeps) {
    const need = (kind: string) => {
      const s = deps.objects.storage(kind);
      if (!s?.watch || !s.create || !s.update || !s.delete) throw new Error(`endpoints controller: the object store does not keep ${kind}`);
      return s;
    };
    this.serviceStorage = need('Service');
    this.endpoints = need('Endpoints');
    this.slices = need('EndpointSlice');
  }

  start(): void {
    // The pods first: a Service synced before they are known would be written with no endpoints.
    this.watches.push(
      this.deps.pods.watchPods('', (ev) => this.onPod(ev)),
      this.serviceStorage.watch!('', (ev) => this.onService(ev as WatchEvent<ServiceLike & KubeObject>)),
    );
    // Services whose Endpoints outlived them (deleted while the agent was down).
    for (const ep of this.endpoints.list().items) if (!this.services.has(keyOf(ep))) this.enqueue(keyOf(ep));
  }

  stop(): void {
    for (const w of this.watches.splice(0)) w.stop();
  }

  /** Resolves once every change seen so far is written. */
  settled(): Promise<void> {
    return this.idle;
  }

  private onService(ev: WatchEvent<ServiceLike & KubeObject>): void {
    const k = keyOf(ev.object);
    if (ev.type === 'DELETED') this.services.delete(k);
    else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.services.set(k, ev.object);
    else return;
    this.enqueue(k);
  }

  private onPod(ev: WatchEvent<Pod>): void {
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') return;
    const k = keyOf(ev.object);
    const old = this.pods.get(k);
    if (ev.type === 'DELETED') this.pods.delete(k);
    else this.pods.set(k, ev.object);
    for (const [sk, svc] of this.services) {
      if (svc.metadata?.namespace !== ev.object.metadata?.namespace) continue;
      if (selectorMatches(svc.spec?.selector, ev.object.metadata?.labels) || selectorMatches(svc.spec?.selector, old?.metadata?.labels)) this.enqueue(sk);
    }
  }

  private enqueue(key: string): void {
    this.queue.add(key);
    if (this.running) return;
    this.running = true;
    this.idle = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.size > 0) {
        const [key] = this.queue;
        this.queue.delete(key!);
        try {
          await this.sync(key!);
        } catch (err) {
          this.deps.logger.warn('Syncing the endpoints of a service failed', { service: key, err: (err as Error).message });
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async sync(key: string): Promise<void> {
    const [namespace = '', name = ''] = key.split('/');
    const svc = this.services.get(key);
    const ownedSlices = this.slices.list().items.filter((s) => s.metadata?.namespace === namespace && s.metadata?.labels?.[serviceNameLabel] === name);
    if (!svc || !managedService(svc)) {
      if (!svc && this.endpoints.get(namespace, name)) await this.endpoints.delete!(namespace, name, {}).catch(() => {});
      for (const s of ownedSlices)
        if (s.metadata?.labels?.[managedByLabel] === managedBy) await this.slices.delete!(namespace, s.metadata.name!, {}).catch(() => {});
      return;
    }
    const pods = [...this.pods.values()];
    await this.writeEndpoints(svc, desiredSubsets(svc, pods));
    await this.writeSlices(svc, desiredSlices(svc, pods), ownedSlices as SliceObject[]);
  }

  private async writeEndpoints(svc: ServiceLike, subsets: unknown[]): Promise<void> {
    const namespace = svc.metadata!.namespace!;
    const name = svc.metadata!.name!;
    const labels = { ...(svc.metadata?.labels ?? {}) };
    if (svc.spec?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
    const current = this.endpoints.get(namespace, name) as (KubeObject & { subsets?: unknown[] }) | undefined;
    if (current && same(current.subsets ?? [], subsets) && same(current.metadata?.labels ?? {}, labels)) return;
    const body = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, subsets };
    if (current) await this.endpoints.update!({ ...body, metadata: { ...current.metadata, labels } }, {});
    else await this.endpoints.create!(body, {});
  }

  private async writeSlices(svc: ServiceLike, wanted: SliceContent[], owned: SliceObject[]): Promise<void> {
    const namespace = svc.metadata!.namespace!;
    const name = svc.metadata!.name!;
    const labels = { ...(svc.metadata?.labels ?? {}), [serviceNameLabel]: name, [managedByLabel]: managedBy };
    const ownerReferences = [{ apiVersion: 'v1', kind: 'Service', name, uid: svc.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }];
    // A Service with no endpoints still has one (empty) slice, as upstream keeps a placeholder.
    if (wanted.length === 0) wanted = [{ ports: [], endpoints: [] }];
    const left = [...owned];
    for (const content of wanted) {
      const i = left.findIndex((s) => endpointPortsKey((s.ports ?? []) as SliceContent['ports']) === endpointPortsKey(content.ports));
      const current = i >= 0 ? left.splice(i, 1)[0] : left.shift();
      // As the API server stores them: an unnamed port's name is "" (discovery/v1 SetDefaults_EndpointPort).
      const ports = content.ports.map((p) => ({ ...p, name: p.name ?? '' }));
      const body: SliceObject = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: current?.metadata?.name ?? `${name}-${randomBytes(3).toString('hex').slice(0, 5)}`, namespace, labels, ownerReferences },
        addressType: 'IPv4',
        endpoints: content.endpoints,
        ...(ports.length ? { ports } : {}),
      };
      if (!current) {
        await this.slices.create!(body, {});
        continue;
      }
      if (same(current.endpoints ?? [], body.endpoints) && same(current.ports ?? [], ports) && same(current.metadata?.labels, labels)) continue;
      await this.slices.update!({ ...body, metadata: { ...current.metadata, labels, ownerReferences } }, {});
    }
    for (const s of left) await this.slices.delete!(namespace, s.metadata!.name!, {}).catch(() => {});
  }
}
