// The resource table's row for core/v1 Nodes: the node agent's own Node, kept by the object store
// (node-strategy.ts) with its status subresource; `kubectl get|describe node`, `label`, `taint`,
// `cordon` and `uncordon` read and patch it. kubectl's node columns (printNode): NAME, STATUS
// (Ready/NotReady/Unknown, SchedulingDisabled when cordoned), ROLES, AGE, VERSION; with -o wide the
// addresses, OS image, kernel and container runtime.

import type { Node } from '../../api/types.js';
import type { KubeObject } from '../backend.js';
import { mergeSchema } from '../patch.js';
import { resource } from '../resource-def.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import { translateTimestampSince } from '../../printers/ages.js';

const rolePrefix = 'node-role.kubernetes.io/';

/** findNodeRoles: node-role.kubernetes.io/<role> labels and kubernetes.io/role's value. */
function nodeRoles(labels: Record<string, string>): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith(rolePrefix) && k.length > rolePrefix.length) roles.add(k.slice(rolePrefix.length));
    else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return [...roles].sort();
}

/** The STATUS column: the Ready condition's word, then SchedulingDisabled when cordoned. */
export function nodeStatusWord(node: Node): string {
  const ready = (node.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const words = [ready ? (ready.status === 'True' ? 'Ready' : ready.status === 'False' ? 'NotReady' : 'Unknown') : 'Unknown'];
  if (node.spec?.unschedulable) words.push('SchedulingDisabled');
  return words.join(',');
}

function address(node: Node, type: string): string {
  return (node.status?.addresses ?? []).find((a) => a.type === type)?.address ?? '<none>';
}

function nodeTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Status', 'The status of the node'),
    col('Roles', 'The roles of the node'),
    col('Age', ageDescription),
    col('Version', 'Kubelet Version reported by the node.'),
    col('Internal-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.', 1),
    col('External-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.', 1),
    col('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', 1),
    col('Kernel-Version', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
    col('Container-Runtime', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', 1),
  ];
  const rows = items.map((o) => {
    const n = o as Node;
    const roles = nodeRoles(n.metadata?.labels ?? {});
    const info = n.status?.nodeInfo;
    return {
      cells: [
        n.metadata?.name ?? '',
        nodeStatusWord(n),
        roles.length > 0 ? roles.join(',') : '<none>',
        translateTimestampSince(n.metadata?.creationTimestamp, opts.now),
        info?.kubeletVersion ?? '',
        address(n, 'InternalIP'),
        address(n, 'ExternalIP'),
        info?.osImage || '<unknown>',
        info?.kernelVersion || '<unknown>',
        info?.containerRuntimeVersion || '<unknown>',
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

export const nodes = resource({
  group: '',
  version: 'v1',
  kind: 'Node',
  resource: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  namespaced: false,
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  storage: (b) => b.objects?.storage('Node'),
  table: nodeTable,
  mergeSchema: mergeSchema({ 'status.conditions': 'type', 'status.addresses': 'type' }),
  status: ['get', 'patch', 'update'],
  fieldSelectors: { 'spec.unschedulable': (n) => String((n as Node).spec?.unschedulable ?? false) },
});
