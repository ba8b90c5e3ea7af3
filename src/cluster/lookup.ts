// ConfigMaps and Secrets from the API server for the lifecycle's synchronous ObjectLookup, as the
// kubelet's TTL-cache managers serve them: a pod's referenced objects are fetched before it starts,
// kept per pod, and refetched in the background once older than the TTL (so an object created or
// changed later is seen by the next container start). The Node authorizer lets a node read exactly
// the objects its pods reference. Services, for the service-link variables, come from a watch of
// every namespace, as the kubelet's service informer (a pod waits for its first list, briefly).

import type { ConfigMap, Pod, Secret } from '../api/types.js';
import type { ServiceForEnv } from '../kuberuntime/envvars.js';
import type { ObjectLookup } from '../kuberuntime/start.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { isNotFound, type ApiClient } from './client.js';
import { Reflector } from './reflector.js';

type Kind = 'configmaps' | 'secrets';

interface Entry {
  value?: ConfigMap | Secret;
  fetchedAt: number;
  inFlight?: Promise<void>;
  /** Pods (uids) that reference it. */
  users: Set<string>;
}

/** The ConfigMaps and Secrets a pod names: env, envFrom and volumes (projected included). */
export function referencedObjects(pod: Pod): { configMaps: string[]; secrets: string[] } {
  const cms = new Set<string>();
  const secrets = new Set<string>();
  const spec = pod.spec;
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
    for (const e of c.envFrom ?? []) {
      if (e.configMapRef?.name) cms.add(e.configMapRef.name);
      if (e.secretRef?.name) secrets.add(e.secretRef.name);
    }
    for (const e of c.env ?? []) {
      if (e.valueFrom?.configMapKeyRef?.name) cms.add(e.valueFrom.configMapKeyRef.name);
      if (e.valueFrom?.secretKeyRef?.name) secrets.add(e.valueFrom.secretKeyRef.name);
    }
  }
  for (const v of spec?.volumes ?? []) {
    if (v.configMap?.name) cms.add(v.configMap.name);
    if (v.secret?.secretName) secrets.add(v.secret.secretName);
    for (const s of v.projected?.sources ?? []) {
      if (s.configMap?.name) cms.add(s.configMap.name);
      if (s.secret?.name) secrets.add(s.secret.name);
    }
  }
  return { configMaps: [...cms], secrets: [...secrets] };
}

export interface ApiObjectLookupOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  /** Entries older than this are refetched on use; the kubelet's default TTL is about 1 min. */
  ttlMs?: number;
  /** How long a pod waits for the first list of the Services before it starts without them (10 s). */
  servicesWaitMs?: number;
}

type WatchedService = ServiceForEnv & { metadata?: { resourceVersion?: string; uid?: string } };

export class ApiObjectLookup implements ObjectLookup {
  private readonly o: ApiObjectLookupOptions;
  private readonly entries = new Map<string, Entry>();
  private readonly serviceWatch: Reflector<WatchedService>;
  private readonly servicesByNamespace = new Map<string, Map<string, WatchedService>>();
  private servicesListed = false;

  constructor(opts: ApiObjectLookupOptions) {
    this.o = opts;
    this.serviceWatch = new Reflector<WatchedService>({
      client: opts.client,
      clock: opts.clock,
      logger: opts.logger,
      path: '/api/v1/services',
      onChange: (type, svc) => this.serviceChanged(type, svc),
      onListed: () => (this.servicesListed = true),
    });
  }

  /** Starts the watch of the Services (once the node is registered). */
  start(): void {
    this.serviceWatch.start();
  }

  async stop(): Promise<void> {
    await this.serviceWatch.stop();
  }

  services(namespace: string): readonly ServiceForEnv[] {
    return [...(this.servicesByNamespace.get(namespace)?.values() ?? [])];
  }

  private serviceChanged(type: 'ADDED' | 'MODIFIED' | 'DELETED', svc: WatchedService): void {
    const ns = svc.metadata?.namespace ?? 'default';
    const name = svc.metadata?.name ?? '';
    let byName = this.servicesByNamespace.get(ns);
    if (type === 'DELETED') {
      byName?.delete(name);
      if (byName?.size === 0) this.servicesByNamespace.delete(ns);
      return;
    }
    if (!byName) this.servicesByNamespace.set(ns, (byName = new Map()));
    byName.set(name, svc);
  }

  configMap(namespace: string, name: string): ConfigMap | undefined {
    return this.read('configmaps', namespace, name) as ConfigMap | undefined;
  }

  secret(namespace: string, name: string): Secret | undefined {
    return this.read('secrets', namespace, name) as Secret | undefined;
  }

  /** Fetches every object the pod references (errors are logged: the container start reports a missing object). */
  async registerPod(pod: Pod): Promise<void> {
    const ns = pod.metadata?.namespace ?? 'default';
    const uid = pod.metadata?.uid ?? '';
    const refs = referencedObjects(pod);
    const wanted: Array<[Kind, string]> = [
      ...refs.configMaps.map((n) => ['configmaps', n] as [Kind, string]),
      ...refs.secrets.map((n) => ['secrets', n] as [Kind, string]),
    ];
    await Promise.all([
      this.servicesListed ? undefined : Promise.race([this.serviceWatch.whenListed(), this.o.clock.sleep(this.o.servicesWaitMs ?? 10_000)]),
      ...wanted.map(([kind, name]) => {
        const e = this.entry(kind, ns, name);
        e.users.add(uid);
        return e.value || e.inFlight ? (e.inFlight ?? Promise.resolve()) : this.fetch(kind, ns, name, e);
      }),
    ]);
  }

  /** Forgets the pod's references; objects no pod uses any more are dropped. */
  unregisterPod(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    for (const [key, e] of this.entries) {
      e.users.delete(uid);
      if (e.users.size === 0) this.entries.delete(key);
    }
  }

  private entry(kind: Kind, ns: string, name: string): Entry {
    const key = `${kind}/${ns}/${name}`;
    let e = this.entries.get(key);
    if (!e) {
      e = { fetchedAt: 0, users: new Set() };
      this.entries.set(key, e);
    }
    return e;
  }

  private read(kind: Kind, ns: string, name: string): ConfigMap | Secret | undefined {
    const e = this.entries.get(`${kind}/${ns}/${name}`);
    if (!e) {
      // Not registered (a reference added by a later spec): fetch for the next attempt.
      void this.fetch(kind, ns, name, this.entry(kind, ns, name));
      return undefined;
    }
    if (!e.inFlight && this.o.clock.now() - e.fetchedAt >= (this.o.ttlMs ?? 60_000)) void this.fetch(kind, ns, name, e);
    return e.value;
  }

  private fetch(kind: Kind, ns: string, name: string, e: Entry): Promise<void> {
    e.inFlight ??= (async () => {
      try {
        e.value = await this.o.client.request<ConfigMap | Secret>('GET', `/api/v1/namespaces/${encodeURIComponent(ns)}/${kind}/${encodeURIComponent(name)}`);
        e.fetchedAt = this.o.clock.now();
      } catch (err) {
        if (isNotFound(err)) {
          e.value = undefined;
          e.fetchedAt = this.o.clock.now();
        } else {
          // Unreachable or forbidden: keep what we had, try again on the next use.
          this.o.logger.warn('Unable to fetch object', { kind, namespace: ns, name, err: (err as Error).message });
        }
      } finally {
        e.inFlight = undefined;
      }
    })();
    return e.inFlight;
  }
}
