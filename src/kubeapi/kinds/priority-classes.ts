// The resource table's row for scheduling.k8s.io/v1 PriorityClasses: cluster-scoped, kept by the
// object store (strategies.ts priorityClassStrategy: the system classes, one global default), printed
// as `kubectl get pc` prints them (printPriorityClass: NAME, VALUE, GLOBAL-DEFAULT, AGE,
// PREEMPTIONPOLICY). Upstream: pkg/registry/scheduling/priorityclass, pkg/printers/internalversion.

import type { PriorityClass } from '../../api/validation/scheduling.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { resource } from '../resource-def.js';

function priorityClassTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Value', 'value represents the integer value of this priority class.', 0, 'integer'),
    col('Global-Default', 'globalDefault specifies whether this PriorityClass should be considered as the default priority.', 0, 'boolean'),
    col('Age', ageDescription),
    col('PreemptionPolicy', 'preemptionPolicy is the Policy for preempting pods with lower priority.'),
  ];
  const rows = items.map((o) => {
    const pc = o as PriorityClass;
    return {
      cells: [
        pc.metadata?.name ?? '',
        pc.value ?? 0,
        pc.globalDefault ?? false,
        translateTimestampSince(pc.metadata?.creationTimestamp, opts.now),
        pc.preemptionPolicy ?? '<none>',
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

export const priorityClasses = resource({
  group: 'scheduling.k8s.io',
  version: 'v1',
  kind: 'PriorityClass',
  resource: 'priorityclasses',
  singular: 'priorityclass',
  shortNames: ['pc'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('PriorityClass'),
  table: priorityClassTable,
});
