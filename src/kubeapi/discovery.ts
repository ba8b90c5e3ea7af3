// Discovery documents generated from the resource table: /api (APIVersions), /api/v1 and
// /apis/<group>/<version> (APIResourceList), /apis (APIGroupList), /apis/<group> (APIGroup); with
// /version. (The OpenAPI documents are openapi.ts's.)
// Upstream: apiserver's endpoints/discovery (legacy, non-aggregated discovery).

import { groupVersionOf, type ResourceDef, type Verb } from './resource-def.js';
import type { GroupVersions, ResourceIndex } from './resource-table.js';

export const serverVersion = {
  major: '1',
  minor: '30',
  gitVersion: 'v1.30.0+podvisor',
  gitCommit: '',
  gitTreeState: 'clean',
  buildDate: '1970-01-01T00:00:00Z',
  goVersion: 'n/a',
  compiler: 'n/a',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

export function apiVersions(index: ResourceIndex, serverAddress: string): unknown {
  const core = index.groups.find((g) => g.group === '');
  return { kind: 'APIVersions', versions: core?.versions ?? [], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

const sortedVerbs = (verbs: readonly Verb[]): string[] => [...verbs].sort();

/** A resource and its subresources as APIResources. */
export function apiResources(def: ResourceDef): APIResource[] {
  const sub = (name: string, kind: string, verbs: readonly Verb[], gv?: { group: string; version: string }): APIResource => ({
    name: `${def.resource}/${name}`,
    singularName: '',
    namespaced: def.namespaced,
    ...(gv ?? {}),
    kind,
    verbs: sortedVerbs(verbs),
  });
  const out: APIResource[] = [
    {
      name: def.resource,
      singularName: def.singular,
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: sortedVerbs(def.verbs),
      ...(def.shortNames ? { shortNames: [...def.shortNames] } : {}),
      ...(def.categories ? { categories: [...def.categories] } : {}),
    },
  ];
  const writes: Verb[] = def.verbs.includes('update') ? ['patch', 'update'] : [];
  if (def.status) out.push(sub('status', def.kind, def.status));
  if (def.scale) out.push(sub('scale', 'Scale', ['get', ...writes], { group: 'autoscaling', version: 'v1' }));
  for (const [name, c] of Object.entries(def.connect ?? {})) out.push(sub(name, c.kind, c.verbs, c.groupVersion));
  return out;
}

/** APIResourceList of one group/version (the core group's has no apiVersion, as the API server's). */
export function resourceList(index: ResourceIndex, group: string, version: string): unknown {
  const resources = index
    .inGroupVersion(group, version)
    .flatMap(apiResources)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const groupVersion = groupVersionOf({ group, version });
  return group ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources } : { kind: 'APIResourceList', groupVersion, resources };
}

function groupDoc(g: GroupVersions): unknown {
  const versions = g.versions.map((version) => ({ groupVersion: `${g.group}/${version}`, version }));
  return { name: g.group, versions, preferredVersion: versions[0] };
}

/** APIGroupList of every named group. */
export function apiGroupList(index: ResourceIndex): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: index.groups.filter((g) => g.group !== '').map(groupDoc) };
}

/** APIGroup of one named group, undefined when not served. */
export function apiGroup(index: ResourceIndex, group: string): unknown {
  const g = index.groups.find((x) => x.group === group && group !== '');
  return g && { kind: 'APIGroup', apiVersion: 'v1', ...(groupDoc(g) as object) };
}
