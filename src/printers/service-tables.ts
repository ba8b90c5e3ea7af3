// The Table columns of Services, Endpoints and EndpointSlices, as kube-apiserver's printers build them
// (pkg/printers/internalversion printService, printEndpoints, printEndpointSlice): `kubectl get svc`
// NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE [SELECTOR].

import type { ServiceLike } from '../api/validation/service.js';
import { translateTimestampSince } from './ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type Table, type TableColumnDefinition, type TableOptions } from './tables.js';

export interface EndpointsLike {
  metadata?: { name?: string; creationTimestamp?: string };
  subsets?: Array<{ addresses?: Array<{ ip: string }>; notReadyAddresses?: Array<{ ip: string }>; ports?: Array<{ port: number }> }>;
}

export interface EndpointSliceLike {
  metadata?: { name?: string; creationTimestamp?: string };
  addressType?: string;
  endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean } }>;
  ports?: Array<{ port?: number }> | null;
}

const none = '<none>';

export const serviceColumnDefinitions: TableColumnDefinition[] = [
  col('Name', nameDescription, 0, 'string', 'name'),
  col('Type', 'The type of the service.'),
  col('Cluster-IP', 'The IP address of the service.'),
  col('External-IP', 'The external IP address of the service.'),
  col('Port(s)', 'The ports on which the service is exposed.'),
  col('Age', ageDescription),
  col('Selector', 'Route service traffic to pods with label keys and values matching this selector.', 1),
];

export const endpointsColumnDefinitions: TableColumnDefinition[] = [
  col('Name', nameDescription, 0, 'string', 'name'),
  col('Endpoints', 'Endpoints of the service.'),
  col('Age', ageDescription),
];

export const endpointSliceColumnDefinitions: TableColumnDefinition[] = [
  col('Name', nameDescription, 0, 'string', 'name'),
  col('AddressType', 'Type of address in the endpoint slice.'),
  col('Ports', 'Ports of the endpoint slice.'),
  col('Endpoints', 'Endpoints of the endpoint slice.'),
  col('Age', ageDescription),
];

/** getServiceExternalIP. */
function externalIP(svc: ServiceLike): string {
  const spec = svc.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : none;
    case 'LoadBalancer': {
      const ingress = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean);
      const all = [...ingress, ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
    default:
      return '<unknown>';
  }
}

/** makePortString. */
function portString(svc: ServiceLike): string {
  const ports = svc.spec?.ports ?? [];
  if (ports.length === 0) return none;
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(',');
}

function selectorString(sel: Record<string, string> | undefined): string {
  const parts = Object.entries(sel ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(',') : none;
}

export function serviceCells(svc: ServiceLike, now: number): string[] {
  const clusterIP = svc.spec?.clusterIP || none;
  return [
    svc.metadata?.name ?? '',
    svc.spec?.type ?? '',
    clusterIP,
    externalIP(svc),
    portString(svc),
    translateTimestampSince(svc.metadata?.creationTimestamp, now),
    selectorString(svc.spec?.selector),
  ];
}

/** formatEndpoints: up to three ip:port pairs, then `+ N more...`. */
export function endpointsString(ep: EndpointsLike): string {
  const max = 3;
  const list: string[] = [];
  let count = 0;
  let more = false;
  for (const s of ep.subsets ?? []) {
    const ports = s.ports?.length ? s.ports : [undefined];
    for (const p of ports) {
      for (const a of s.addresses ?? []) {
        if (list.length < max) list.push(p ? `${a.ip}:${p.port}` : a.ip);
        else more = true;
        count++;
      }
    }
  }
  if (list.length === 0) return none;
  return more ? `${list.join(',')} + ${count - max} more...` : list.join(',');
}

/** formatDiscoveryPorts / formatDiscoveryEndpoints. */
function slicePorts(slice: EndpointSliceLike): string {
  const ports = slice.ports ?? [];
  if (ports.length === 0) return '<unset>';
  return ports.map((p) => String(p.port ?? '<unset>')).join(',');
}

function sliceEndpoints(slice: EndpointSliceLike): string {
  const addrs = (slice.endpoints ?? []).flatMap((e) => e.addresses ?? []);
  if (addrs.length === 0) return '<unset>';
  return addrs.length > 3 ? `${addrs.slice(0, 3).join(',')} + ${addrs.length - 3} more...` : addrs.join(',');
}

export function serviceTable(items: readonly ServiceLike[], opts: TableOptions): Table {
  const include = opts.includeObject ?? 'Metadata';
  return table(
    serviceColumnDefinitions,
    items.map((s) => ({ cells: serviceCells(s, opts.now), object: rowObject(s, include) })),
    opts,
  );
}

export function endpointsTable(items: readonly EndpointsLike[], opts: TableOptions): Table {
  const include = opts.includeObject ?? 'Metadata';
  return table(
    endpointsColumnDefinitions,
    items.map((e) => ({
      cells: [e.metadata?.name ?? '', endpointsString(e), translateTimestampSince(e.metadata?.creationTimestamp, opts.now)],
      object: rowObject(e, include),
    })),
    opts,
  );
}

export function endpointSliceTable(items: readonly EndpointSliceLike[], opts: TableOptions): Table {
  const include = opts.includeObject ?? 'Metadata';
  return table(
    endpointSliceColumnDefinitions,
    items.map((s) => ({
      cells: [s.metadata?.name ?? '', s.addressType ?? '', slicePorts(s), sliceEndpoints(s), translateTimestampSince(s.metadata?.creationTimestamp, opts.now)],
      object: rowObject(s, include),
    })),
    opts,
  );
}
