// The resource table's rows for core/v1 Endpoints and discovery.k8s.io/v1 EndpointSlices: kept by the
// object store, written by the agent's endpoints controllers (src/controllers/endpoints/) for
// Services with a selector, by clients for the others.

import { endpointSliceTable, endpointsTable } from '../../printers/service-tables.js';
import { resource } from '../resource-def.js';

const objectVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

export const endpoints = resource({
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  resource: 'endpoints',
  singular: 'endpoints',
  shortNames: ['ep'],
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('Endpoints'),
  table: endpointsTable,
});

export const endpointSlices = resource({
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  resource: 'endpointslices',
  singular: 'endpointslice',
  namespaced: true,
  verbs: objectVerbs,
  storage: (b) => b.objects?.storage('EndpointSlice'),
  table: endpointSliceTable,
});
