// The Kubernetes API this server serves, as a table of resources: one row per kind (kinds/*.ts). The
// REST handler, the routes and discovery are all generated from it; adding a kind is adding its row
// here (plus its strategy in strategies.ts when the object store keeps it, and its Table printer).
// Upstream: the apiserver's per-group storage maps (pkg/registry/*/rest/storage_*.go).

import { accessReviewResources } from './kinds/access-reviews.js';
import { selfSubjectReviews, tokenReviews } from './kinds/authentication.js';
import { configMaps, secrets } from './kinds/config.js';
import { customResourceDefinitions } from './kinds/custom-resource-definitions.js';
import { endpointSlices, endpoints } from './kinds/endpoints.js';
import { events } from './kinds/events.js';
import { ingressClasses, ingresses } from './kinds/ingresses.js';
import { horizontalPodAutoscalers } from './kinds/horizontal-pod-autoscalers.js';
import { leases } from './kinds/leases.js';
import { limitRanges } from './kinds/limit-ranges.js';
import { resourceQuotas } from './kinds/resource-quotas.js';
import { networkPolicies } from './kinds/network-policies.js';
import { namespaces } from './kinds/namespaces.js';
import { nodes } from './kinds/nodes.js';
import { podDisruptionBudgets } from './kinds/pod-disruption-budgets.js';
import { persistentVolumeClaims, persistentVolumes } from './kinds/persistent-volumes.js';
import { podMetricsResource } from './kinds/pod-metrics.js';
import { pods } from './kinds/pods.js';
import { rbacResources } from './kinds/rbac.js';
import { serviceAccounts } from './kinds/service-accounts.js';
import { priorityClasses } from './kinds/priority-classes.js';
import { replicationControllers } from './kinds/replication-controllers.js';
import { runtimeClasses } from './kinds/runtime-classes.js';
import { services } from './kinds/services.js';
import { storageClasses } from './kinds/storage-classes.js';
import { workloadResources } from './kinds/workloads.js';
import { groupVersionOf, type ResourceDef } from './resource-def.js';
import { servedVersions } from './versions.js';

export const resourceTable: readonly ResourceDef[] = [
  configMaps,
  events,
  namespaces,
  nodes,
  pods,
  secrets,
  podMetricsResource,
  ...workloadResources,
  replicationControllers,
  services,
  endpoints,
  endpointSlices,
  leases,
  podDisruptionBudgets,
  ...rbacResources,
  ...accessReviewResources,
  serviceAccounts,
  tokenReviews,
  selfSubjectReviews,
  limitRanges,
  resourceQuotas,
  networkPolicies,
  ingresses,
  ingressClasses,
  persistentVolumes,
  persistentVolumeClaims,
  storageClasses,
  priorityClasses,
  ...servedVersions(horizontalPodAutoscalers),
  runtimeClasses,
  customResourceDefinitions,
];

export interface GroupVersions {
  group: string;
  /** In preference order (the first is preferred). */
  versions: string[];
}

/** The table indexed for routing and discovery. */
export class ResourceIndex {
  private readonly byPath = new Map<string, ResourceDef>();
  readonly groups: GroupVersions[] = [];

  constructor(readonly table: readonly ResourceDef[]) {
    for (const def of table) {
      const key = `${groupVersionOf(def)}/${def.resource}`;
      if (this.byPath.has(key)) throw new Error(`resource table: ${key} is listed twice`);
      this.byPath.set(key, def);
      let g = this.groups.find((x) => x.group === def.group);
      if (!g) this.groups.push((g = { group: def.group, versions: [] }));
      if (!g.versions.includes(def.version)) g.versions.push(def.version);
    }
  }

  /** The row for a resource of a group/version ('' group: core), if served. */
  lookup(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.byPath.get(`${group ? `${group}/${version}` : version}/${resource}`);
  }

  /** Rows of one group/version. */
  inGroupVersion(group: string, version: string): ResourceDef[] {
    return this.table.filter((d) => d.group === group && d.version === version);
  }

  servesGroupVersion(group: string, version: string): boolean {
    return this.groups.some((g) => g.group === group && g.versions.includes(version));
  }
}
