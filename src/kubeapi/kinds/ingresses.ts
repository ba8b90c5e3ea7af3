// The resource table's rows for networking.k8s.io/v1 Ingresses and IngressClasses: kept by the object
// store (ingress-strategy.ts), an Ingress with a status subresource the agent's ingress proxy writes,
// printed as `kubectl get ing` and `kubectl get ingressclass` print them (printIngress: NAME, CLASS,
// HOSTS, ADDRESS, PORTS, AGE; printIngressClass: NAME, CONTROLLER, PARAMETERS, AGE).
// Upstream: pkg/registry/networking/ingress, pkg/registry/networking/ingressclass,
// pkg/printers/internalversion printers.go.

import type { Ingress, IngressClass, IngressRule } from '../../api/validation/networking.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

/** formatHosts: the first three hosts, `*` when no rule names one. */
export function formatHosts(rules: readonly IngressRule[] | undefined): string {
  const list: string[] = [];
  const max = 3;
  let more = false;
  for (const rule of rules ?? []) {
    if (list.length === max) more = true;
    if (!more && rule.host) list.push(rule.host);
  }
  if (list.length === 0) return '*';
  const joined = list.join(',');
  return more ? `${joined} + ${(rules?.length ?? 0) - max} more...` : joined;
}

/** ingressLoadBalancerStatusStringer (not wide: cut at 16 characters). */
export function formatIngressAddress(ing: Ingress): string {
  const parts: string[] = [];
  for (const i of ing.status?.loadBalancer?.ingress ?? []) {
    if (i.ip) parts.push(i.ip);
    if (i.hostname) parts.push(i.hostname);
  }
  const r = parts.join(',');
  return r.length > 16 ? `${r.slice(0, 13)}...` : r;
}

function ingressTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Class', 'The name of the IngressClass resource to use'),
    col('Hosts', 'Hosts that incoming requests are matched against before the ingress rule'),
    col('Address', 'Address is a list containing ingress points for the load-balancer'),
    col('Ports', 'Ports of TLS configurations that open'),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => {
    const ing = o as Ingress;
    return {
      cells: [
        ing.metadata?.name ?? '',
        ing.spec?.ingressClassName ?? '<none>',
        formatHosts(ing.spec?.rules),
        formatIngressAddress(ing),
        ing.spec?.tls?.length ? '80, 443' : '80',
        translateTimestampSince(ing.metadata?.creationTimestamp, opts.now),
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

function ingressClassTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Controller', 'Controller that is responsible for handling this class'),
    col('Parameters', 'A reference to a resource with additional parameters'),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => {
    const ic = o as IngressClass;
    const p = ic.spec?.parameters;
    const parameters = p ? `${p.kind}${p.apiGroup ? `.${p.apiGroup}` : ''}/${p.name}` : '<none>';
    return {
      cells: [ic.metadata?.name ?? '', ic.spec?.controller ?? '', parameters, translateTimestampSince(ic.metadata?.creationTimestamp, opts.now)],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

export const ingresses = resource({
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'Ingress',
  resource: 'ingresses',
  singular: 'ingress',
  shortNames: ['ing'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('Ingress'),
  table: ingressTable,
  status: ['get', 'patch', 'update'],
});

export const ingressClasses = resource({
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'IngressClass',
  resource: 'ingressclasses',
  singular: 'ingressclass',
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('IngressClass'),
  table: ingressClassTable,
});
