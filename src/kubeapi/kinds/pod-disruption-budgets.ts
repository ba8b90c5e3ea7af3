// The resource table's row for policy/v1 PodDisruptionBudgets: kept by the object store
// (strategies.ts podDisruptionBudgetStrategy) with a status subresource the disruption controller and
// pods/eviction write, printed as `kubectl get pdb` prints them (printPodDisruptionBudget: NAME, MIN
// AVAILABLE, MAX UNAVAILABLE, ALLOWED DISRUPTIONS, AGE). Upstream: pkg/registry/policy/poddisruptionbudget.

import type { PodDisruptionBudget } from '../../api/validation/policy.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { mergeSchema } from '../patch.js';
import { resource } from '../resource-def.js';

function pdbTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Min Available', 'The minimum number of pods that must be available.'),
    col('Max Unavailable', 'The maximum number of pods that may be unavailable.'),
    col('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', 0, 'integer'),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => {
    const pdb = o as PodDisruptionBudget;
    return {
      cells: [
        pdb.metadata?.name ?? '',
        pdb.spec?.minAvailable !== undefined ? String(pdb.spec.minAvailable) : 'N/A',
        pdb.spec?.maxUnavailable !== undefined ? String(pdb.spec.maxUnavailable) : 'N/A',
        pdb.status?.disruptionsAllowed ?? 0,
        translateTimestampSince(pdb.metadata?.creationTimestamp, opts.now),
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

export const podDisruptionBudgets = resource({
  group: 'policy',
  version: 'v1',
  kind: 'PodDisruptionBudget',
  resource: 'poddisruptionbudgets',
  singular: 'poddisruptionbudget',
  shortNames: ['pdb'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('PodDisruptionBudget'),
  table: pdbTable,
  mergeSchema: mergeSchema({ 'status.conditions': 'type' }),
  status: ['get', 'patch', 'update'],
});
