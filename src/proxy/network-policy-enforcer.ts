// NetworkPolicies enforced on the host for the agent's pods (the role of a network plugin's policy
// agent): fed by the stored NetworkPolicies, Namespaces and the pods, it computes the filters
// (network-policy-rules.ts) and keeps them in the filter table (network-policy-table.ts), which it
// creates with the first policy. Pods without a network of their own (host network, host processes)
// cannot be isolated: a policy that selects them gets a Warning event naming them (its create and
// update are answered with a Warning header too: unisolatedWarning). A table iptables cannot write
// is reported on each policy as a Warning event, never silently.

import type { Pod } from '../api/types.js';
import type { NetworkPolicy } from '../api/validation/network-policy.js';
import type { EventObject, EventRecorder } from '../events/recorder.js';
import type { KubeObject, ObjectsBackend, Watch, WatchEvent } from '../kubeapi/backend.js';
import type { Logger } from '../util/logger.js';
import { computePodFilters, unisolatedPods, type PolicyNamespace, type PolicyPod } from './network-policy-rules.js';
import { NetworkPolicyTable } from './network-policy-table.js';

export interface NetworkPolicyEnforcerDeps {
  objects: ObjectsBackend;
  pods: { listPods(): { items: Pod[] }; watchPods(rv: string, on: (ev: WatchEvent<Pod>) => void): Watch };
  /** Whether the runtime gives pods a network of their own (containerd, --pod-network=cni). */
  podNetwork: boolean;
  /** The agent's filter chain (one per root dir, so agents on one host keep apart). */
  chain: string;
  logger: Logger;
  recorder?: EventRecorder;
}

/** A pod as the filters see it. */
export function policyPod(pod: Pod, podNetwork: boolean): PolicyPod {
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
    labels: pod.metadata?.labels ?? {},
    ...(pod.status?.podIP && !pod.status.podIP.includes(':') ? { ip: pod.status.podIP } : {}),
    onPodNetwork: podNetwork && !pod.spec?.hostNetwork,
    ports: [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].flatMap((c) => c.ports ?? []),
  };
}

/** Why a pod cannot be isolated, as its entry in a warning: `ns/name (host network)`. */
function why(p: PolicyPod, pod: Pod | undefined): string {
  return `${p.namespace}/${p.name} (${pod?.spec?.hostNetwork ? 'host network' : 'host process, no pod network'})`;
}

/** The Warning a write of the policy is answered with when it selects pods no policy can isolate; undefined otherwise. */
export function unisolatedWarning(np: NetworkPolicy, pods: readonly Pod[], podNetwork: boolean): string | undefined {
  const byKey = new Map(pods.map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p]));
  const left = unisolatedPods(
    np,
    pods.filter((p) => !isTerminal(p)).map((p) => policyPod(p, podNetwork)),
  );
  if (left.length === 0) return undefined;
  const names = left.map((p) => why(p, byKey.get(`${p.namespace}/${p.name}`)));
  return `NetworkPolicy ${np.metadata?.namespace ?? ''}/${np.metadata?.name ?? ''} selects pods no policy can isolate, whose traffic is not filtered: ${names.join(', ')}; run them on the pod network (containerd or --pod-network=cni, without hostNetwork) to isolate them`;
}

const isTerminal = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export class NetworkPolicyEnforcer {
  private readonly watches: Watch[] = [];
  private table: NetworkPolicyTable | undefined;
  private tableStarted: Promise<void> | undefined;
  private tableError: string | undefined;
  private scheduled = false;
  private stopped = false;
  /** The last warning event text per policy, so each is told once until it changes. */
  private readonly told = new Map<string, string>();

  constructor(private readonly deps: NetworkPolicyEnforcerDeps) {}

  start(): void {
    const watch = (kind: string) => this.deps.objects.storage(kind)?.watch?.('', () => this.schedule());
    for (const w of [watch('NetworkPolicy'), watch('Namespace'), this.deps.pods.watchPods('', () => this.schedule())]) if (w) this.watches.push(w);
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches.splice(0)) w.stop();
    this.table?.stop();
    this.table = undefined;
  }

  /** Settles once the filters of what was seen so far are in the kernel. */
  async settled(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    await this.tableStarted;
    await this.table?.settled();
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.stopped) this.sync();
    });
  }

  private sync(): void {
    const policies = (this.deps.objects.storage('NetworkPolicy')?.list().items ?? []) as Array<NetworkPolicy & KubeObject>;
    const podList = this.deps.pods.listPods().items.filter((p) => !isTerminal(p));
    const pods = podList.map((p) => policyPod(p, this.deps.podNetwork));
    const namespaces: PolicyNamespace[] = (this.deps.objects.storage('Namespace')?.list().items ?? []).map((n) => ({
      name: n.metadata?.name ?? '',
      labels: n.metadata?.labels ?? {},
    }));
    for (const np of policies) {
      const text = unisolatedWarning(np, podList, this.deps.podNetwork);
      this.tell(np, 'PodsNotIsolated', text);
    }
    if (policies.length === 0 && !this.table) return;
    if (!this.table) {
      const table = (this.table = new NetworkPolicyTable(this.deps.logger, this.deps.chain));
      this.tableStarted = table.start().then(
        () => this.deps.logger.info('Network policies: enforced in the filter table', { chain: table.chain }),
        (err: Error) => {
          this.tableError = err.message;
          this.deps.logger.warn('Network policies cannot be enforced: iptables cannot write the filter table', { err: err.message });
          this.schedule();
        },
      );
    }
    if (this.tableError) {
      for (const np of policies)
        this.tell(
          np,
          'PolicyNotEnforced',
          `NetworkPolicy is not enforced: iptables cannot write the filter table (${this.tableError}); run the agent as root with iptables installed`,
        );
      return;
    }
    void this.table.set(computePodFilters(policies, pods, namespaces));
  }

  private tell(np: NetworkPolicy & KubeObject, reason: string, text: string | undefined): void {
    const k = `${reason}:${np.metadata?.namespace}/${np.metadata?.name}`;
    if (!text) {
      this.told.delete(k);
      return;
    }
    if (this.told.get(k) === text) return;
    this.told.set(k, text);
    const m = np.metadata ?? {};
    const ref: EventObject = {
      kind: 'NetworkPolicy',
      apiVersion: 'networking.k8s.io/v1',
      namespace: m.namespace ?? 'default',
      name: m.name ?? '',
      uid: m.uid ?? '',
      resourceVersion: m.resourceVersion ?? '',
    };
    this.deps.recorder?.event(ref, 'Warning', reason, text);
  }
}
