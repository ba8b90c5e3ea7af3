// The resource table's row for core/v1 Services: kept by the object store with the agent's ClusterIP
// and NodePort allocator (strategies.ts serviceStrategy), printed as `kubectl get svc` prints them.

import type { ServiceLike } from '../../api/validation/service.js';
import { serviceTable } from '../../printers/service-tables.js';
import type { KubeObject } from '../backend.js';
import { mergeSchema } from '../patch.js';
import { resource } from '../resource-def.js';

export const services = resource<ServiceLike & KubeObject>({
  group: '',
  version: 'v1',
  kind: 'Service',
  resource: 'services',
  singular: 'service',
  shortNames: ['svc'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('Service'),
  table: serviceTable,
  status: ['get', 'patch', 'update'],
  // ServiceSpec.ports merges by port (k8s.io/api/core/v1 types.go).
  mergeSchema: mergeSchema({ 'spec.ports': 'port', 'status.conditions': 'type' }),
});
