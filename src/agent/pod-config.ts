// The merge of the kubelet's config package for the agent's sources: each manifest (a static-pod
// file, the manifest URL) is set as a whole. Pods are told apart by UID, which for these sources is a
// hash of the content, so: a new pod is added; a pod whose content changed (same name, new UID) is
// replaced — the old one terminated gracefully, then the new one started; a pod no longer listed is
// terminated. A manifest that fails to load is reported (log, a Warning event on the node, agent
// status) and changes nothing: the pods it had keep running until it is fixed or removed. (The
// kubelet drops them; a half-saved edit must not take a service down.)

import type { Pod } from '../api/types.js';
import { configSourceAnnotation } from '../api/defaults.js';
import type { ManifestUpdate } from '../config/static-source.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Logger } from '../util/logger.js';
import { podKey, type PodOrigin, type PodRegistry } from './pod-registry.js';

export interface ManifestState {
  origin: string;
  source: PodOrigin['source'];
  pods: number;
  /** The last load error, until the manifest loads again. */
  error?: string;
}

export class PodConfig {
  private readonly manifests = new Map<string, ManifestState>();
  /** Source-level problems (directory unreadable, URL unreachable), by source location. */
  readonly sourceErrors = new Map<string, string>();

  constructor(
    private readonly registry: PodRegistry,
    private readonly recorder: EventRecorder,
    private readonly logger: Logger,
    private readonly nodeName: string,
  ) {}

  /** What `agent status` shows of each manifest. */
  states(): ManifestState[] {
    return [...this.manifests.values()];
  }

  apply(source: 'file' | 'http', u: ManifestUpdate): void {
    const origin: PodOrigin = { source, from: u.origin };
    if (u.kind === 'error') {
      const state = this.manifests.get(u.origin) ?? { origin: u.origin, source, pods: 0 };
      state.error = u.error;
      this.manifests.set(u.origin, state);
      this.logger.error('Could not load a pod manifest; its pods (if any) keep running as they were', { path: u.origin, err: u.error });
      this.recorder.event(
        { kind: 'Node', namespace: 'default', name: this.nodeName, uid: this.nodeName },
        'Warning',
        'FailedToLoadManifest',
        `${u.origin}: ${u.error}`,
      );
      return;
    }
    const pods = u.kind === 'removed' ? [] : u.pods;
    if (u.kind === 'removed') this.manifests.delete(u.origin);
    else this.manifests.set(u.origin, { origin: u.origin, source, pods: pods.length });
    for (const p of pods) {
      if (source === 'http') (p.metadata!.annotations ??= {})[configSourceAnnotation] = 'http';
    }
    this.set(origin, pods);
  }

  private set(origin: PodOrigin, pods: Pod[]): void {
    const current = this.registry.podsFrom(origin);
    const desired = new Map(pods.map((p) => [p.metadata!.uid!, p]));
    const currentByKey = new Map([...current.values()].map((p) => [podKey(p.metadata!.namespace!, p.metadata!.name!), p]));
    const uidOf = (p: Pod) => p.metadata!.uid!;
    for (const [uid, old] of current) {
      if (desired.has(uid)) continue;
      const key = podKey(old.metadata!.namespace!, old.metadata!.name!);
      const replacement = pods.find((p) => podKey(p.metadata!.namespace!, p.metadata!.name!) === key);
      if (replacement) {
        this.logger.info('Static pod changed: terminating the old version, then starting the new one', {
          pod: key,
          oldUID: uid,
          newUID: uidOf(replacement),
          source: origin.from,
        });
        this.registry.replace(uid, replacement, origin);
      } else {
        this.logger.info('Static pod removed from its source: terminating it', { pod: key, source: origin.from });
        void this.registry.delete(old.metadata!.namespace!, old.metadata!.name!, {}, true).catch(() => {});
      }
    }
    for (const [uid, pod] of desired) {
      const key = podKey(pod.metadata!.namespace!, pod.metadata!.name!);
      if (current.has(uid) || currentByKey.has(key)) continue;
      const other = this.registry.origin(pod.metadata!.namespace!, pod.metadata!.name!);
      if (other) {
        const msg = `pod ${key} from ${origin.from} is ignored: a pod of that name already comes from ${other.from}`;
        this.logger.error('Duplicate pod name', { pod: key, source: origin.from, other: other.from });
        this.recorder.event({ kind: 'Node', namespace: 'default', name: this.nodeName, uid: this.nodeName }, 'Warning', 'DuplicatePodName', msg);
        const st = this.manifests.get(origin.from);
        if (st) st.error = msg;
        continue;
      }
      this.logger.info('Adding pod from its source', { pod: key, source: origin.from });
      void this.registry.add(pod, origin).catch((err: Error) => this.logger.error('Failed to add pod', { pod: key, err: err.message }));
    }
  }
}
