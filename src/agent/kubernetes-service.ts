// The `kubernetes` Service of the `default` namespace and its Endpoints and EndpointSlice, as the API
// server keeps them (pkg/controlplane/controller/kubernetesservice and the endpoint reconciler): a
// ClusterIP Service on the service range's first address, port 443 named https, whose one endpoint is
// the agent's in-cluster TLS listener. That listener is on the loopback (nothing listens beyond it
// unless asked), and the endpoint says 127.0.0.1: the service proxy, in the host's network namespace,
// forwards a pod's connection to ClusterIP:443 there, so containerd pods (the range routed to the
// host) and host-process pods (the range on the loopback) reach it alike. Written at start (the port
// is new on each start) and again whenever one of the three is deleted or changed by someone else.

import type { KubeObject, ObjectsBackend, Watch } from '../kubeapi/backend.js';
import { canonicalJSON } from '../api/defaults.js';
import type { Logger } from '../util/logger.js';

const namespace = 'default';
const name = 'kubernetes';
const labels = { component: 'apiserver', provider: 'kubernetes' };

export interface KubernetesServiceOptions {
  objects: ObjectsBackend;
  logger: Logger;
  /** The service range's first address. */
  clusterIP: string;
  /** Where the service proxy reaches the agent's TLS API. */
  endpointIP: string;
  endpointPort: number;
}

function desired(o: KubernetesServiceOptions): Record<'Service' | 'Endpoints' | 'EndpointSlice', KubeObject & Record<string, unknown>> {
  const port = { name: 'https', port: o.endpointPort, protocol: 'TCP' };
  return {
    Service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels },
      spec: {
        type: 'ClusterIP',
        clusterIP: o.clusterIP,
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: o.endpointPort }],
        sessionAffinity: 'None',
      },
    },
    Endpoints: {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name, namespace, labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: [{ addresses: [{ ip: o.endpointIP }], ports: [port] }],
    },
    EndpointSlice: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [o.endpointIP], conditions: { ready: true } }],
      ports: [port],
    },
  };
}

/** What of an object the reconciler owns (the rest is the server's or another writer's). */
function owned(kind: string, o: KubeObject): string {
  const x = o as Record<string, unknown> & { spec?: { clusterIP?: string; ports?: unknown[]; type?: string } };
  if (kind === 'Service') return canonicalJSON([x.spec?.type, x.spec?.ports]);
  if (kind === 'Endpoints') return canonicalJSON(x.subsets);
  return canonicalJSON([x.endpoints, x.ports]);
}

export class KubernetesService {
  private readonly watches: Watch[] = [];
  private busy = false;
  private again = false;
  /** What the last write stored of each (with the server's defaults), to tell another writer's change from one's own. */
  private readonly written = new Map<string, string>();

  constructor(private readonly o: KubernetesServiceOptions) {}

  /** Writes the three objects, then keeps them so. */
  async start(): Promise<void> {
    await this.reconcile();
    for (const kind of ['Service', 'Endpoints', 'EndpointSlice'] as const) {
      const w = this.o.objects.storage(kind)?.watch?.('', (ev) => {
        if (ev.object.metadata?.namespace === namespace && ev.object.metadata?.name === name && ev.type !== 'ADDED') void this.reconcile();
      });
      if (w) this.watches.push(w);
    }
  }

  stop(): void {
    for (const w of this.watches.splice(0)) w.stop();
  }

  async reconcile(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      do {
        this.again = false;
        const want = desired(this.o);
        for (const kind of ['Service', 'Endpoints', 'EndpointSlice'] as const) await this.ensure(kind, want[kind]);
      } while (this.again);
    } catch (err) {
      this.o.logger.error('Could not write the kubernetes Service', { err: (err as Error).message });
    } finally {
      this.busy = false;
    }
  }

  private async ensure(kind: 'Service' | 'Endpoints' | 'EndpointSlice', want: KubeObject): Promise<void> {
    const storage = this.o.objects.storage(kind);
    if (!storage) return;
    const current = storage.get(namespace, name);
    const have = current ? owned(kind, current) : undefined;
    if (have !== undefined && (have === this.written.get(kind) || have === owned(kind, want))) return;
    if (!current) {
      try {
        this.written.set(kind, owned(kind, await storage.create!(want, {})));
      } catch (err) {
        // The first address held by a Service made before: the kubernetes Service takes what it is given.
        if (kind !== 'Service' || (err as { code?: number }).code !== 422) throw err;
        const spec = { ...(want as { spec: Record<string, unknown> }).spec };
        delete spec.clusterIP;
        this.written.set(kind, owned(kind, await storage.create!({ ...want, spec } as KubeObject, {})));
        this.o.logger.warn("The kubernetes Service could not have the service range's first address", { wanted: this.o.clusterIP });
      }
      return;
    }
    const next = { ...current, ...want, metadata: { ...current.metadata, labels: want.metadata?.labels } } as KubeObject & { spec?: Record<string, unknown> };
    if (kind === 'Service')
      next.spec = {
        ...(current as { spec?: object }).spec,
        ...(want as { spec: object }).spec,
        clusterIP: (current as { spec?: { clusterIP?: string } }).spec?.clusterIP,
      };
    this.written.set(kind, owned(kind, await storage.update!(next, {})));
  }
}
