// The resource table's row for networking.k8s.io/v1 NetworkPolicies: kept by the object store
// (strategies.ts networkPolicyStrategy: SetDefaults_NetworkPolicy, ValidateNetworkPolicy), enforced
// for the pods on the agent's pod network (proxy/network-policy-*.ts), printed as `kubectl get netpol`
// prints them (printNetworkPolicy: NAME, POD-SELECTOR, AGE). Upstream: pkg/registry/networking/networkpolicy.

import type { NetworkPolicy } from '../../api/validation/network-policy.js';
import { selectorString } from '../../api/label-selector.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

function networkPolicyTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Pod-Selector', 'Selects the pods to which this NetworkPolicy object applies.'),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => ({
    cells: [
      o.metadata?.name ?? '',
      selectorString((o as NetworkPolicy).spec?.podSelector) || '<none>',
      translateTimestampSince(o.metadata?.creationTimestamp, opts.now),
    ],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export const networkPolicies = resource({
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'NetworkPolicy',
  resource: 'networkpolicies',
  singular: 'networkpolicy',
  shortNames: ['netpol'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('NetworkPolicy'),
  table: networkPolicyTable,
});
