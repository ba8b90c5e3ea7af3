// Mirror pods for static pods, as the kubelet's mirror client keeps them: for each static pod a copy
// in the API server annotated kubernetes.io/config.mirror=<config hash>, owned by the Node; a mirror
// that is missing, being deleted, or of another hash is (deleted and) created again. The mirror is
// where the static pod's status and events are reported.

import type { Pod } from '../api/types.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { isNotFound, objectKey, podPath, RetryBackoff, type ApiClient } from './client.js';
import type { StatusTarget } from './status-sync.js';

export const CONFIG_MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
export const CONFIG_HASH_ANNOTATION = 'kubernetes.io/config.hash';

/**
 * A static pod as the kubelet's file source names it on a node: `<name>-<node name>` (its uid, computed
 * before, stays), so pods from the same manifest on different nodes do not collide in the API server.
 */
export function nameStaticPod(pod: Pod, nodeName: string): Pod {
  const suffix = `-${nodeName.toLowerCase()}`;
  const name = pod.metadata?.name ?? '';
  if (name.endsWith(suffix)) return pod;
  return { ...pod, metadata: { ...pod.metadata, name: `${name}${suffix}` }, spec: { ...pod.spec!, nodeName } };
}

export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
}

/** The static pod's hash (its config.hash annotation, else its uid). */
export function staticPodHash(pod: Pod): string {
  return pod.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] ?? pod.metadata?.uid ?? '';
}

/** The mirror pod the kubelet creates for a static pod: its metadata and spec, the mirror annotation, the Node as owner. */
export function buildMirrorPod(pod: Pod, nodeName: string, nodeUid: string | undefined): Pod {
  const m = pod.metadata ?? {};
  const metadata: NonNullable<Pod['metadata']> = {
    name: m.name,
    namespace: m.namespace ?? 'default',
    annotations: { ...(m.annotations ?? {}), [CONFIG_MIRROR_ANNOTATION]: staticPodHash(pod) },
  };
  if (m.labels) metadata.labels = { ...m.labels };
  if (nodeUid) metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid, controller: true }];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { ...structuredClone(pod.spec!), nodeName } };
}

export interface MirrorPodsOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  nodeName: string;
  nodeUid: () => string | undefined;
  /** Told when a static pod's mirror appears or changes (its status can be sent now). */
  onMirror?: (staticUid: string) => void;
}

export class MirrorPods {
  private readonly o: MirrorPodsOptions;
  /** Static pods by key (namespace/name). */
  private readonly statics = new Map<string, Pod>();
  /** Mirror pods in the API server by key. */
  private readonly mirrors = new Map<string, Pod>();
  private readonly backoff = new RetryBackoff(1000, 30_000);
  private timer?: Timer;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(opts: MirrorPodsOptions) {
    this.o = opts;
  }

  addStatic(pod: Pod): void {
    this.statics.set(objectKey(pod), pod);
    this.sync();
  }

  /** A mirror pod as the pod source sees it change. */
  observe(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod): void {
    const key = objectKey(pod);
    const s = this.statics.get(key);
    const before = s ? this.target(s.metadata?.uid ?? '')?.uid : undefined;
    if (type === 'DELETED') this.mirrors.delete(key);
    else this.mirrors.set(key, pod);
    // Only a new mirror object is news; our own status patches modify the current one.
    const now = s ? this.target(s.metadata?.uid ?? '')?.uid : undefined;
    if (s && now && now !== before) this.o.onMirror?.(s.metadata!.uid!);
    this.sync();
  }

  /** The mirror pod a static pod reports to; undefined while there is no current one. */
  target(staticUid: string): StatusTarget | undefined {
    for (const [key, s] of this.statics) {
      if (s.metadata?.uid !== staticUid) continue;
      const m = this.mirrors.get(key);
      if (!m || !this.current(s, m)) return undefined;
      return { namespace: m.metadata!.namespace!, name: m.metadata!.name!, uid: m.metadata!.uid! };
    }
    return undefined;
  }

  isStatic(uid: string): boolean {
    for (const s of this.statics.values()) if (s.metadata?.uid === uid) return true;
    return false;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private current(s: Pod, m: Pod): boolean {
    return !m.metadata?.deletionTimestamp && m.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] === staticPodHash(s);
  }

  /** Reconciles all mirrors (serialised; a request during a run runs once more after it). */
  sync(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.running = this.reconcile().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.sync();
      }
    });
  }

  private async reconcile(): Promise<void> {
    const { client, nodeName } = this.o;
    let failed = false;
    for (const [key, s] of this.statics) {
      const m = this.mirrors.get(key);
      if (m && this.current(s, m)) continue;
      try {
        if (m) {
          // Outdated or being deleted: remove it (this exact one) before creating the current one.
          try {
            await client.request('DELETE', podPath(m.metadata!.namespace!, m.metadata!.name!), {
              body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: m.metadata!.uid } },
            });
          } catch (err) {
            if (!isNotFound(err) && (err as { code?: number }).code !== 409) throw err;
          }
          this.mirrors.delete(key);
        }
        const created = await client.request<Pod>('POST', `/api/v1/namespaces/${encodeURIComponent(s.metadata?.namespace ?? 'default')}/pods`, {
          body: buildMirrorPod(s, nodeName, this.o.nodeUid()),
        });
        this.mirrors.set(key, created);
        this.o.onMirror?.(s.metadata!.uid!);
      } catch (err) {
        // 409 on create: a mirror exists that the watch has not shown yet; it will, and we reconcile then.
        if ((err as { code?: number }).code === 409) continue;
        failed = true;
        this.o.logger.warn('Failed creating a mirror pod', { pod: key, err: (err as Error).message });
      }
    }
    if (failed && !this.stopped) this.timer = this.o.clock.setTimer(this.backoff.next(), () => this.sync());
    else this.backoff.reset();
  }
}
