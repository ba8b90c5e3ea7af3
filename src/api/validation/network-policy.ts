// networking.k8s.io/v1 NetworkPolicy: its defaults (pkg/apis/networking/v1 SetDefaults_NetworkPolicy:
// ports' protocol TCP; policyTypes [Ingress], plus Egress when egress rules are given) and its
// validation (pkg/apis/networking/validation ValidateNetworkPolicy: selectors, ports with endPort,
// peers with exactly one ipBlock or selectors, ipBlock CIDRs with except a strict subset, policyTypes).

import { isIP } from 'node:net';
import type { IPBlock, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec } from 'kubernetes-types/networking/v1.js';
import { type FieldError, type FieldPath, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { isValidPortName, isValidPortNum } from './names.js';
import { validateObjectMeta } from './pod.js';
import { validateLabelSelector } from './workload.js';

export type { IPBlock, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort };

/** SetDefaults_NetworkPolicy, on a copy. */
export function defaultNetworkPolicy(np: NetworkPolicy): NetworkPolicy {
  const out = structuredClone(np) as {
    spec?: { ingress?: Array<{ ports?: Array<{ protocol?: string }> }>; egress?: Array<{ ports?: Array<{ protocol?: string }> }>; policyTypes?: string[] };
  };
  const spec = (out.spec ??= {});
  for (const rule of [...(spec.ingress ?? []), ...(spec.egress ?? [])]) for (const p of rule.ports ?? []) p.protocol ??= 'TCP';
  if (!spec.policyTypes || spec.policyTypes.length === 0) spec.policyTypes = (spec.egress ?? []).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  return out as NetworkPolicy;
}

/** A CIDR as net.ParseCIDR reads it: `address/prefix`, IPv4 or IPv6; undefined when it is none. */
export function parseCIDR(cidr: string): { family: 4 | 6; bits: bigint; prefix: number } | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
  if (!m) return undefined;
  const family = isIP(m[1]!);
  const prefix = Number(m[2]);
  if (family === 0 || prefix > (family === 4 ? 32 : 128)) return undefined;
  let bits = 0n;
  if (family === 4) for (const o of m[1]!.split('.')) bits = (bits << 8n) | BigInt(Number(o));
  else {
    const [head, tail] = m[1]!.includes('::') ? m[1]!.split('::') : [m[1]!, undefined];
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
    for (const g of groups) bits = (bits << 16n) | BigInt(parseInt(g || '0', 16));
  }
  return { family: family as 4 | 6, bits, prefix };
}

const cidrMessage = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

function validateIPBlock(b: IPBlock, path: FieldPath): FieldError[] {
  if (!b.cidr) return [required(path.child('cidr'), '')];
  const cidr = parseCIDR(b.cidr);
  if (!cidr) return [invalid(path.child('cidr'), b.cidr, cidrMessage)];
  const errs: FieldError[] = [];
  (b.except ?? []).forEach((e, i) => {
    const p = path.child('except').index(i);
    const ex = parseCIDR(e);
    if (!ex) {
      errs.push(invalid(p, e, cidrMessage));
      return;
    }
    const width = cidr.family === 4 ? 32 : 128;
    const shift = BigInt(width - cidr.prefix);
    const inside = ex.family === cidr.family && ex.bits >> shift === cidr.bits >> shift;
    if (!inside || cidr.prefix >= ex.prefix) errs.push(invalid(p, e, 'must be a strict subset of `cidr`'));
  });
  return errs;
}

function validatePeer(peer: NetworkPolicyPeer, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let n = 0;
  if (peer.podSelector) {
    n++;
    errs.push(...validateLabelSelector(peer.podSelector, path.child('podSelector')));
  }
  if (peer.namespaceSelector) {
    n++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, path.child('namespaceSelector')));
  }
  if (peer.ipBlock) {
    n++;
    errs.push(...validateIPBlock(peer.ipBlock, path.child('ipBlock')));
  }
  if (n === 0) errs.push(required(path, 'must specify a peer'));
  else if (n > 1 && peer.ipBlock) errs.push(forbidden(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

const protocols = ['TCP', 'UDP', 'SCTP'];

function validatePort(port: NetworkPolicyPort, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (port.protocol !== undefined && !protocols.includes(port.protocol)) errs.push(notSupported(path.child('protocol'), port.protocol, protocols));
  if (port.port !== undefined) {
    if (typeof port.port === 'number') {
      errs.push(...isValidPortNum(port.port).map((m) => invalid(path.child('port'), port.port, m)));
      if (port.endPort !== undefined) {
        if (port.endPort < port.port) errs.push(invalid(path.child('endPort'), port.port, 'must be greater than or equal to `port`'));
        errs.push(...isValidPortNum(port.endPort).map((m) => invalid(path.child('endPort'), port.endPort, m)));
      }
    } else {
      if (port.endPort !== undefined) errs.push(invalid(path.child('endPort'), port.endPort, 'may not be specified when `port` is non-numeric'));
      errs.push(...isValidPortName(port.port).map((m) => invalid(path.child('port'), port.port, m)));
    }
  } else if (port.endPort !== undefined) {
    errs.push(invalid(path.child('endPort'), port.endPort, 'may not be specified when `port` is not specified'));
  }
  return errs;
}

const policyTypes = ['Ingress', 'Egress'];

export function validateNetworkPolicySpec(np: NetworkPolicy): FieldError[] {
  const spec: Partial<NetworkPolicySpec> = np.spec ?? {};
  const path = newPath('spec');
  const errs = validateLabelSelector(spec.podSelector, path.child('podSelector'));
  (spec.ingress ?? []).forEach((rule, i) => {
    const p = path.child('ingress').index(i);
    (rule.ports ?? []).forEach((port, j) => errs.push(...validatePort(port, p.child('ports').index(j))));
    (rule.from ?? []).forEach((peer, j) => errs.push(...validatePeer(peer, p.child('from').index(j))));
  });
  (spec.egress ?? []).forEach((rule, i) => {
    const p = path.child('egress').index(i);
    (rule.ports ?? []).forEach((port, j) => errs.push(...validatePort(port, p.child('ports').index(j))));
    (rule.to ?? []).forEach((peer, j) => errs.push(...validatePeer(peer, p.child('to').index(j))));
  });
  const types = spec.policyTypes ?? [];
  if (types.length > policyTypes.length) {
    errs.push(invalid(path.child('policyTypes'), types, 'may not specify more than two policyTypes'));
    return errs;
  }
  types.forEach((t, i) => {
    if (!policyTypes.includes(t)) errs.push(notSupported(path.child('policyTypes').index(i), t, policyTypes));
  });
  return errs;
}

export function validateNetworkPolicy(np: NetworkPolicy): FieldError[] {
  return sortFieldErrors([...validateObjectMeta(np.metadata), ...validateNetworkPolicySpec(np)]);
}
