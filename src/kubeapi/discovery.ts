// Discovery documents generated from the resource table: /api (APIVersions), /api/v1 and
// /apis/<group>/<version> (APIResourceList), /apis (APIGroupList), /apis/<group> (APIGroup); with
// /version and the minimal /openapi/v2 document kubectl's apply and create insist on.
// Upstream: apiserver's endpoints/discovery (legacy, non-aggregated discovery).

import { groupVersionOf, type ResourceDef, type Verb } from './resource-def.js';
import type { GroupVersions, ResourceIndex } from './resource-table.js';
import { lengthDelimited } from '../util/protobuf-wire.js';

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

interface APIResource {
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
function apiResources(def: ResourceDef): APIResource[] {
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

/** The PATCH operation of each served kind's item path, with its group/version/kind and its dryRun parameter. */
interface PatchPath {
  path: string;
  gvk: { group: string; version: string; kind: string };
}

function patchPaths(index: ResourceIndex): PatchPath[] {
  return index.table
    .filter((def) => def.verbs.includes('patch'))
    .map((def) => {
      const prefix = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
      return {
        path: `${prefix}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.resource}/{name}`,
        gvk: { group: def.group, version: def.version, kind: def.kind },
      };
    });
}

/**
 * The OpenAPI v2 document, as kube-apiserver serves it in protobuf (gnostic's openapi_v2.Document) and
 * JSON, reduced to what clients read from it: `info`, and for each kind the PATCH operation of its
 * item path with the `x-kubernetes-group-version-kind` extension and the `dryRun` query parameter,
 * which kubectl 1.20's `--dry-run=server` looks for before it sends one. No definitions: kubectl
 * finds no schema for a kind, skips client-side validation and uses its built-in strategic-merge
 * metadata.
 */
export function openapiV2(index: ResourceIndex): { protobuf: Buffer; json: unknown } {
  const paths = patchPaths(index);
  const gvkYaml = (g: PatchPath['gvk']) => `group: ${JSON.stringify(g.group)}\nkind: ${g.kind}\nversion: ${g.version}\n`;
  // Document{1 swagger, 2 info{1 title, 2 version}, 8 paths{2 path NamedPathItem{1 name, 2 PathItem{8 patch
  // Operation{8 parameters ParametersItem{1 Parameter{2 NonBodyParameter{3 QueryParameterSubSchema{2 in,
  // 4 name, 6 type}}}}, 13 vendor_extension NamedAny{1 name, 2 Any{2 yaml}}}}}}}.
  const dryRunParam = lengthDelimited(
    1,
    lengthDelimited(2, lengthDelimited(3, Buffer.concat([lengthDelimited(2, 'query'), lengthDelimited(4, 'dryRun'), lengthDelimited(6, 'string')]))),
  );
  const pathItems = paths.map((p) =>
    lengthDelimited(
      2,
      Buffer.concat([
        lengthDelimited(1, p.path),
        lengthDelimited(
          2,
          lengthDelimited(
            8,
            Buffer.concat([
              lengthDelimited(8, dryRunParam),
              lengthDelimited(
                13,
                Buffer.concat([lengthDelimited(1, 'x-kubernetes-group-version-kind'), lengthDelimited(2, lengthDelimited(2, gvkYaml(p.gvk)))]),
              ),
            ]),
          ),
        ),
      ]),
    ),
  );
  const protobuf = Buffer.concat([
    lengthDelimited(1, '2.0'),
    lengthDelimited(2, Buffer.concat([lengthDelimited(1, 'Kubernetes'), lengthDelimited(2, serverVersion.gitVersion)])),
    lengthDelimited(8, Buffer.concat(pathItems)),
  ]);
  const json = {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: serverVersion.gitVersion },
    paths: Object.fromEntries(
      paths.map((p) => [
        p.path,
        {
          patch: {
            parameters: [{ uniqueItems: true, type: 'string', name: 'dryRun', in: 'query' }],
            'x-kubernetes-group-version-kind': p.gvk,
          },
        },
      ]),
    ),
    definitions: {},
  };
  return { protobuf, json };
}
