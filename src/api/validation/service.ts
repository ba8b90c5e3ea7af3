// Validation of Services, Endpoints and EndpointSlices as the API server checks them
// (pkg/apis/core/validation ValidateService, ValidateServiceUpdate, ValidateEndpoints;
// pkg/apis/discovery/validation ValidateEndpointSlice), and the Service defaults (SetDefaults_Service
// with the service strategy's PrepareForCreate).

import type { ObjectMeta } from '../types.js';
import { type FieldError, type FieldPath, duplicate, forbidden, invalid, newPath, notSupported, required, sortFieldErrors } from '../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidPortName, isValidPortNum, maxLenError, regexError } from './names.js';
import { validateLabels, validateObjectMeta } from './pod.js';

/** The Service fields podvisor reads (kubernetes-types' core/v1 Service, loosely). */
export interface ServicePortLike {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

export interface ServiceLike {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: {
    type?: string;
    selector?: Record<string, string>;
    ports?: ServicePortLike[];
    clusterIP?: string;
    clusterIPs?: string[];
    externalName?: string;
    externalIPs?: string[];
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    publishNotReadyAddresses?: boolean;
    externalTrafficPolicy?: string;
    internalTrafficPolicy?: string;
    ipFamilies?: string[];
    ipFamilyPolicy?: string;
    allocateLoadBalancerNodePorts?: boolean;
    loadBalancerIP?: string;
  };
  status?: { loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string }> } };
}

export const serviceTypes = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] as const;
const protocols = ['SCTP', 'TCP', 'UDP'] as const;
const ipv4Re = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

/** IsDNS1035Label: what Service names must be. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > 63) errs.push(maxLenError(63));
  if (!new RegExp(`^${dns1035LabelFmt}$`).test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

/** SetDefaults_Service and the strategy's create-time defaults. */
export function defaultService(svc: ServiceLike): ServiceLike {
  const spec = (svc.spec ??= {});
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  if (spec.sessionAffinity === 'ClientIP') {
    const c = ((spec.sessionAffinityConfig ??= {}).clientIP ??= {});
    c.timeoutSeconds ??= 10800;
  }
  for (const p of spec.ports ?? []) {
    p.protocol ??= 'TCP';
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (spec.type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
    if (spec.clusterIP === undefined && spec.clusterIPs?.length) spec.clusterIP = spec.clusterIPs[0];
    // A headless Service's clusterIPs (the registry's dual-stack defaulting: clusterIPs[0] is clusterIP).
    if (spec.clusterIP === 'None' && !spec.clusterIPs?.length) spec.clusterIPs = ['None'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.ipFamilies ??= ['IPv4'];
  }
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  return svc;
}

function validatePort(p: ServicePortLike, multiple: boolean, svcType: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (multiple && !p.name) errs.push(required(path.child('name'), ''));
  else if (p.name) errs.push(...isDNS1123Label(p.name).map((m) => invalid(path.child('name'), p.name, m)));
  errs.push(...isValidPortNum(p.port).map((m) => invalid(path.child('port'), p.port, m)));
  if (!p.protocol) errs.push(required(path.child('protocol'), ''));
  else if (!(protocols as readonly string[]).includes(p.protocol)) errs.push(notSupported(path.child('protocol'), p.protocol, protocols));
  if (typeof p.targetPort === 'number') errs.push(...isValidPortNum(p.targetPort).map((m) => invalid(path.child('targetPort'), p.targetPort, m)));
  else if (typeof p.targetPort === 'string') errs.push(...isValidPortName(p.targetPort).map((m) => invalid(path.child('targetPort'), p.targetPort, m)));
  if (p.nodePort !== undefined && p.nodePort !== 0) {
    if (svcType === 'ClusterIP' || svcType === 'ExternalName') errs.push(forbidden(path.child('nodePort'), `may not be used when \`type\` is '${svcType}'`));
    else errs.push(...isValidPortNum(p.nodePort).map((m) => invalid(path.child('nodePort'), p.nodePort, m)));
  }
  return errs;
}

/** ValidateService. */
export function validateService(svc: ServiceLike): FieldError[] {
  const meta = newPath('metadata');
  const errs: FieldError[] = validateObjectMeta(svc.metadata).filter((e) => e.field !== 'metadata.name' || !svc.metadata?.name);
  if (svc.metadata?.name) errs.push(...isDNS1035Label(svc.metadata.name).map((m) => invalid(meta.child('name'), svc.metadata!.name, m)));
  const spec = svc.spec ?? {};
  const sp = newPath('spec');
  const type = spec.type ?? 'ClusterIP';
  if (!(serviceTypes as readonly string[]).includes(type)) errs.push(notSupported(sp.child('type'), type, serviceTypes));
  const ports = spec.ports ?? [];
  const headless = spec.clusterIP === 'None';
  if (ports.length === 0 && type !== 'ExternalName' && !headless) errs.push(required(sp.child('ports'), ''));
  if (type === 'ExternalName') {
    if (spec.clusterIP) errs.push(forbidden(sp.child('clusterIP'), "may not be set for `type` 'ExternalName'"));
    if (!spec.externalName) errs.push(required(sp.child('externalName'), ''));
    else errs.push(...isDNS1123Subdomain(spec.externalName.replace(/\.$/, '')).map((m) => invalid(sp.child('externalName'), spec.externalName, m)));
  } else if (spec.clusterIP && !headless && !ipv4Re.test(spec.clusterIP)) {
    errs.push(invalid(sp.child('clusterIPs').index(0), spec.clusterIP, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
  }
  if (headless && (type === 'NodePort' || type === 'LoadBalancer'))
    errs.push(invalid(sp.child('clusterIPs').index(0), 'None', `may not be "None" for ${type} services`));
  const names = new Set<string>();
  const portKeys = new Set<string>();
  const nodePorts = new Map<string, number>();
  ports.forEach((p, i) => {
    const pp = sp.child('ports').index(i);
    errs.push(...validatePort(p, ports.length > 1, type, pp));
    if (p.name) {
      if (names.has(p.name)) errs.push(duplicate(pp.child('name'), p.name));
      names.add(p.name);
    }
    const k = `${p.port}/${p.protocol}`;
    if (portKeys.has(k)) errs.push(duplicate(pp, { port: p.port, protocol: p.protocol }));
    portKeys.add(k);
    if (p.nodePort) {
      const nk = `${p.nodePort}/${p.protocol}`;
      if (nodePorts.has(nk)) errs.push(duplicate(pp.child('nodePort'), p.nodePort));
      nodePorts.set(nk, p.nodePort);
    }
  });
  if (spec.selector) errs.push(...validateLabels(spec.selector, sp.child('selector')));
  const affinity = spec.sessionAffinity ?? 'None';
  if (affinity !== 'None' && affinity !== 'ClientIP') errs.push(notSupported(sp.child('sessionAffinity'), affinity, ['ClientIP', 'None']));
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  if (affinity === 'ClientIP' && timeout !== undefined && !(timeout > 0 && timeout <= 86400))
    errs.push(invalid(sp.child('sessionAffinityConfig', 'clientIP', 'timeoutSeconds'), timeout, 'must be greater than 0 and less than 86400'));
  if (affinity === 'None' && spec.sessionAffinityConfig)
    errs.push(forbidden(sp.child('sessionAffinityConfig'), `must not be set when session affinity is None`));
  (spec.externalIPs ?? []).forEach((ip, i) => {
    if (!ipv4Re.test(ip)) errs.push(invalid(sp.child('externalIPs').index(i), ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
  });
  for (const [f, v, allowed] of [
    ['externalTrafficPolicy', spec.externalTrafficPolicy, ['Cluster', 'Local']],
    ['internalTrafficPolicy', spec.internalTrafficPolicy, ['Cluster', 'Local']],
  ] as const) {
    if (v !== undefined && !(allowed as readonly string[]).includes(v)) errs.push(notSupported(sp.child(f), v, allowed));
  }
  if (spec.externalTrafficPolicy && type !== 'NodePort' && type !== 'LoadBalancer')
    errs.push(invalid(sp.child('externalTrafficPolicy'), spec.externalTrafficPolicy, 'may only be set for externally-accessible services'));
  return sortFieldErrors(errs);
}

/** ValidateServiceUpdate: the ClusterIP may not change while the Service keeps one. */
export function validateServiceUpdate(next: ServiceLike, old: ServiceLike): FieldError[] {
  const errs: FieldError[] = [];
  const was = old.spec?.clusterIP;
  const now = next.spec?.clusterIP;
  const keepsIP = next.spec?.type !== 'ExternalName' && old.spec?.type !== 'ExternalName';
  // An update that names no ClusterIP keeps the old one (the registry's patchAllocatedValues).
  if (keepsIP && was && now && now !== was) errs.push(invalid(newPath('spec', 'clusterIPs').index(0), now, 'may not change once set'));
  return errs;
}

/** ValidateEndpoints (the parts a client may get wrong): addresses are IPs, ports valid and named when several. */
export function validateEndpoints(ep: {
  metadata?: ObjectMeta;
  subsets?: Array<{
    addresses?: Array<{ ip: string }>;
    notReadyAddresses?: Array<{ ip: string }>;
    ports?: Array<{ name?: string; port: number; protocol?: string }>;
  }>;
}): FieldError[] {
  const errs = validateObjectMeta(ep.metadata);
  (ep.subsets ?? []).forEach((s, i) => {
    const p = newPath('subsets').index(i);
    for (const f of ['addresses', 'notReadyAddresses'] as const) {
      (s[f] ?? []).forEach((a, j) => {
        if (!ipv4Re.test(a.ip) && !a.ip.includes(':')) errs.push(invalid(p.child(f).index(j).child('ip'), a.ip, 'must be a valid IP address'));
      });
    }
    const ports = s.ports ?? [];
    ports.forEach((port, j) => {
      const pp = p.child('ports').index(j);
      if (ports.length > 1 && !port.name) errs.push(required(pp.child('name'), ''));
      errs.push(...isValidPortNum(port.port).map((m) => invalid(pp.child('port'), port.port, m)));
    });
  });
  return sortFieldErrors(errs);
}

/** ValidateEndpointSlice (the parts a client may get wrong). */
export function validateEndpointSlice(slice: {
  metadata?: ObjectMeta;
  addressType?: string;
  endpoints?: Array<{ addresses?: string[] }>;
  ports?: Array<{ port?: number }>;
}): FieldError[] {
  const errs = validateObjectMeta(slice.metadata);
  const types = ['FQDN', 'IPv4', 'IPv6'];
  if (!slice.addressType) errs.push(required(newPath('addressType'), ''));
  else if (!types.includes(slice.addressType)) errs.push(notSupported(newPath('addressType'), slice.addressType, types));
  (slice.endpoints ?? []).forEach((e, i) => {
    const n = e.addresses?.length ?? 0;
    if (n < 1 || n > 100)
      errs.push(invalid(newPath('endpoints').index(i).child('addresses'), e.addresses ?? [], 'must contain at least 1 address but no more than 100'));
  });
  (slice.ports ?? []).forEach((p, i) => {
    if (p.port !== undefined) errs.push(...isValidPortNum(p.port).map((m) => invalid(newPath('ports').index(i).child('port'), p.port, m)));
  });
  return sortFieldErrors(errs);
}
