// The resource table's rows for core/v1 ConfigMaps and Secrets: kept as plain objects by the
// backend's object store, checked by their strategies (kubeapi/strategies.ts), with kubectl's columns.

import { configMapTable, secretTable } from '../../printers/config-tables.js';
import { resource } from '../resource-def.js';

const objectVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

export const configMaps = resource({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  resource: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('ConfigMap'),
  table: configMapTable,
});

export const secrets = resource({
  group: '',
  version: 'v1',
  kind: 'Secret',
  resource: 'secrets',
  singular: 'secret',
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('Secret'),
  table: secretTable,
  fieldSelectors: { type: (s) => (s as { type?: string }).type ?? '' },
});
