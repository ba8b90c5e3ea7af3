// NetworkPolicies turned into packet filters, as a network plugin enforcing them must
// (k8s.io/api/networking/v1 semantics; the upstream e2e suite test/e2e/network/netpol): a pod selected
// by any policy of a type (Ingress, Egress) is isolated for that type, and what it may receive or send
// is the union of those policies' rules. A rule's peers are pods (podSelector in the policy's
// namespace, namespaceSelector for every pod of the namespaces it picks, both for the pods picked in
// those namespaces) or an ipBlock with its exceptions; no peers: anyone. Its ports are numbers (with
// endPort a range) or names resolved from the container ports of the pod receiving the traffic; no
// ports: every port. Pure: policies, pods and namespaces in, the filters of the isolated pods out,
// and then the `iptables-restore` input of the filter table that holds them (one chain per isolated
// pod and direction, jumped to from the agent's chain in FORWARD; replies of allowed connections pass
// by conntrack; a packet no rule allows is rejected).

import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { selectorMatches } from '../api/label-selector.js';
import type { NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort } from '../api/validation/network-policy.js';

/** A pod as the filters see it. */
export interface PolicyPod {
  namespace: string;
  name: string;
  uid: string;
  labels: Readonly<Record<string, string>>;
  /** Its IPv4 address on the pod network; undefined when it has none (yet). */
  ip?: string;
  /** Whether it has a network of its own the host can filter (not host network, not a host process). */
  onPodNetwork: boolean;
  ports: ReadonlyArray<{ name?: string; containerPort: number; protocol?: string }>;
}

export interface PolicyNamespace {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** One allowed kind of traffic: from/to a CIDR (none: anywhere) on a protocol and port range (none: all). */
export interface AllowRule {
  cidr?: string;
  except?: readonly string[];
  protocol?: string;
  port?: number;
  endPort?: number;
}

/** An isolated pod's filter in one direction: what it may receive (ingress) or send (egress); none allowed: nothing. */
export interface PodFilter {
  pod: string;
  uid: string;
  ip: string;
  direction: 'ingress' | 'egress';
  allow: AllowRule[];
}

export type PolicyType = 'Ingress' | 'Egress';

/** The policy's types as defaulted (SetDefaults_NetworkPolicy). */
export function policyTypesOf(np: NetworkPolicy): PolicyType[] {
  const t = np.spec?.policyTypes;
  if (t && t.length > 0) return t as PolicyType[];
  return (np.spec?.egress ?? []).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
}

/** The policy selects the pod: same namespace, its podSelector matches (empty: every pod). */
export function policySelects(np: NetworkPolicy, pod: Pick<PolicyPod, 'namespace' | 'labels'>): boolean {
  return (np.metadata?.namespace ?? '') === pod.namespace && selectorMatches(np.spec?.podSelector ?? {}, pod.labels);
}

const isV4 = (cidr: string) => !cidr.includes(':');
const hostCIDR = (ip: string) => `${ip}/32`;

/** The pods a pod-selecting peer picks. */
function peerPods(peer: NetworkPolicyPeer, policyNamespace: string, pods: readonly PolicyPod[], namespaces: readonly PolicyNamespace[]): PolicyPod[] {
  const nsLabels = (name: string) => namespaces.find((n) => n.name === name)?.labels ?? { 'kubernetes.io/metadata.name': name };
  return pods.filter((p) => {
    if (peer.namespaceSelector) {
      if (!selectorMatches(peer.namespaceSelector, nsLabels(p.namespace))) return false;
    } else if (p.namespace !== policyNamespace) return false;
    return peer.podSelector ? selectorMatches(peer.podSelector, p.labels) : true;
  });
}

/** A named port's number on a pod, for the protocol; undefined when the pod has no such port. */
function namedPort(pod: PolicyPod, name: string, protocol: string): number | undefined {
  return pod.ports.find((p) => p.name === name && (p.protocol ?? 'TCP') === protocol)?.containerPort;
}

interface Peer {
  cidr?: string;
  except?: readonly string[];
  /** Set when the peer is a pod (the one whose named ports an egress rule resolves). */
  pod?: PolicyPod;
}

/** A rule's peers as CIDRs: undefined for "anyone" (no peers given). */
function rulePeers(
  peers: readonly NetworkPolicyPeer[] | undefined,
  ns: string,
  pods: readonly PolicyPod[],
  namespaces: readonly PolicyNamespace[],
): Peer[] | undefined {
  if (!peers || peers.length === 0) return undefined;
  const out: Peer[] = [];
  for (const peer of peers) {
    if (peer.ipBlock) {
      if (isV4(peer.ipBlock.cidr)) out.push({ cidr: peer.ipBlock.cidr, except: (peer.ipBlock.except ?? []).filter(isV4) });
      continue;
    }
    for (const p of peerPods(peer, ns, pods, namespaces)) if (p.ip) out.push({ cidr: hostCIDR(p.ip), pod: p });
  }
  return out;
}

/**
 * The allow rules of one policy rule for `target` (the isolated pod): each peer with each port.
 * Ingress: named ports are the target's. Egress: the destination's, so each pod peer (or, with no
 * peers, every pod that has the port) gets its own rule; an ipBlock cannot name a port.
 */
function expand(
  direction: 'ingress' | 'egress',
  target: PolicyPod,
  peers: Peer[] | undefined,
  ports: readonly NetworkPolicyPort[] | undefined,
  pods: readonly PolicyPod[],
): AllowRule[] {
  const out: AllowRule[] = [];
  const peerList: Peer[] = peers ?? [{}];
  if (!ports || ports.length === 0) {
    for (const p of peerList) out.push(peerRule(p));
    return out;
  }
  for (const port of ports) {
    const protocol = port.protocol ?? 'TCP';
    if (port.port === undefined) {
      for (const p of peerList) out.push({ ...peerRule(p), protocol });
    } else if (typeof port.port === 'number') {
      for (const p of peerList) out.push({ ...peerRule(p), protocol, port: port.port, ...(port.endPort !== undefined ? { endPort: port.endPort } : {}) });
    } else if (direction === 'ingress') {
      const n = namedPort(target, port.port, protocol);
      if (n !== undefined) for (const p of peerList) out.push({ ...peerRule(p), protocol, port: n });
    } else {
      const destinations = peers ? peers.filter((p) => p.pod) : pods.filter((p) => p.ip).map((pod) => ({ cidr: hostCIDR(pod.ip!), pod }));
      for (const d of destinations) {
        const n = namedPort(d.pod!, port.port, protocol);
        if (n !== undefined) out.push({ cidr: d.cidr!, protocol, port: n });
      }
    }
  }
  return out;
}

function peerRule(p: Peer): AllowRule {
  return { ...(p.cidr ? { cidr: p.cidr } : {}), ...(p.except && p.except.length > 0 ? { except: p.except } : {}) };
}

/**
 * The filters of every isolated pod on the pod network: for each pod with an IP and each type a
 * policy selecting it has, the union of those policies' rules in that direction (in policy order,
 * duplicates dropped). Pods off the pod network are never isolated (policiesUnenforceable names them).
 */
export function computePodFilters(policies: readonly NetworkPolicy[], pods: readonly PolicyPod[], namespaces: readonly PolicyNamespace[]): PodFilter[] {
  const out: PodFilter[] = [];
  const sorted = [...policies].sort((a, b) => key(a).localeCompare(key(b)));
  for (const pod of [...pods].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`))) {
    if (!pod.onPodNetwork || !pod.ip) continue;
    const selecting = sorted.filter((np) => policySelects(np, pod));
    for (const direction of ['ingress', 'egress'] as const) {
      const type: PolicyType = direction === 'ingress' ? 'Ingress' : 'Egress';
      const applying = selecting.filter((np) => policyTypesOf(np).includes(type));
      if (applying.length === 0) continue;
      const allow: AllowRule[] = [];
      const seen = new Set<string>();
      for (const np of applying) {
        const ns = np.metadata?.namespace ?? '';
        const rules =
          direction === 'ingress'
            ? (np.spec?.ingress ?? []).map((r) => ({ peers: r.from, ports: r.ports }))
            : (np.spec?.egress ?? []).map((r) => ({ peers: r.to, ports: r.ports }));
        for (const r of rules) {
          for (const a of expand(direction, pod, rulePeers(r.peers, ns, pods, namespaces), r.ports, pods)) {
            const k = JSON.stringify(a);
            if (!seen.has(k)) {
              seen.add(k);
              allow.push(a);
            }
          }
        }
      }
      out.push({ pod: `${pod.namespace}/${pod.name}`, uid: pod.uid, ip: pod.ip, direction, allow });
    }
  }
  return out;
}

const key = (np: NetworkPolicy) => `${np.metadata?.namespace ?? ''}/${np.metadata?.name ?? ''}`;

/** The pods a policy selects that it cannot isolate (no pod network: host network or host processes), as `ns/name`. */
export function unisolatedPods(np: NetworkPolicy, pods: readonly PolicyPod[]): PolicyPod[] {
  return pods.filter((p) => !p.onPodNetwork && policySelects(np, p));
}

/** The filter chain of the agent whose state is under rootDir: `PVNP-` and 7 hex digits of its path's hash (as its bridge). */
export function networkPolicyChain(rootDir: string): string {
  return `PVNP-${createHash('sha256').update(resolve(rootDir)).digest('hex').slice(0, 7)}`;
}

/** The packet mark bit the per-pod chains set on traffic a rule allows (clear of kube-proxy's 0x4000 and 0x8000). */
export const allowMark = '0x20000/0x20000';

/** The chain of one pod and direction: `<chain>-I<8 hex of its uid>` or `-E`. */
export function podChain(chain: string, f: Pick<PodFilter, 'uid' | 'direction'>): string {
  const h = createHash('sha256').update(f.uid).digest('hex').slice(0, 8);
  return `${chain}-${f.direction === 'ingress' ? 'I' : 'E'}${h}`;
}

function match(direction: 'ingress' | 'egress', a: AllowRule): string {
  const parts: string[] = [];
  if (a.cidr) parts.push(`${direction === 'ingress' ? '-s' : '-d'} ${a.cidr}`);
  if (a.protocol) {
    const proto = a.protocol.toLowerCase();
    parts.push(`-p ${proto}`);
    if (a.port !== undefined) parts.push(`-m ${proto} --dport ${a.port}${a.endPort !== undefined && a.endPort !== a.port ? `:${a.endPort}` : ''}`);
  }
  return parts.join(' ');
}

/** The chains a set of filters is written in: the agent's chain first, then each pod's and its except chains. */
export function filterChains(chain: string, filters: readonly PodFilter[]): string[] {
  const out = [chain];
  for (const f of filters) {
    const c = podChain(chain, f);
    out.push(c);
    f.allow.forEach((a, i) => {
      if (a.except?.length) out.push(`${c}-${i}`);
    });
  }
  return out;
}

/**
 * The `iptables-restore --noflush` input of the filter table: `chain` (jumped to from FORWARD) lets
 * replies of established connections by, then sends traffic to an ingress-isolated pod through its
 * ingress chain and traffic from an egress-isolated pod through its egress chain; each marks what a
 * rule allows (an ipBlock's exceptions return before the mark) and rejects the rest. Chains written
 * before and not wanted now (`stale`) are emptied and deleted in the same transaction.
 */
export function filterRestoreInput(chain: string, filters: readonly PodFilter[], stale: readonly string[] = []): string {
  const chains = filterChains(chain, filters);
  const gone = stale.filter((c) => !chains.includes(c));
  const lines = ['*filter', ...[...chains, ...gone].map((c) => `:${c} - [0:0]`)];
  lines.push(`-A ${chain} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`);
  for (const f of filters) lines.push(`-A ${chain} ${f.direction === 'ingress' ? '-d' : '-s'} ${f.ip}/32 -j ${podChain(chain, f)}`);
  for (const f of filters) {
    const c = podChain(chain, f);
    lines.push(`-A ${c} -j MARK --set-xmark 0x0/${allowMark.split('/')[1]}`);
    f.allow.forEach((a, i) => {
      const m = match(f.direction, a);
      if (a.except?.length) {
        const sub = `${c}-${i}`;
        lines.push(`-A ${c}${m ? ` ${m}` : ''} -j ${sub}`);
        for (const e of a.except) lines.push(`-A ${sub} ${f.direction === 'ingress' ? '-s' : '-d'} ${e} -j RETURN`);
        lines.push(`-A ${sub} -j MARK --set-xmark ${allowMark}`);
      } else {
        lines.push(`-A ${c}${m ? ` ${m}` : ''} -j MARK --set-xmark ${allowMark}`);
      }
    });
    lines.push(`-A ${c} -m mark --mark ${allowMark} -j RETURN`, `-A ${c} -j REJECT`);
  }
  for (const c of gone) lines.push(`-X ${c}`);
  lines.push('COMMIT', '');
  return lines.join('\n');
}
