// The names a client may give a kind (`nodes`, `node`, `no`, `Node`, `deployments.apps`), resolved
// against the resource table as kubectl's RESTMapper resolves them against discovery: plural,
// singular, short names and the kind, optionally qualified by the group; the core group first when
// two groups serve one name (core pods before metrics.k8s.io pods). Categories (`all`) expand to
// their members in discovery's order: by group as the table lists them, then by resource name.
// Upstream: k8s.io/apimachinery/pkg/api/meta.PriorityRESTMapper and restmapper's category expansion.

import { groupVersionOf, type ResourceDef } from './resource-def.js';

function namesOf(def: ResourceDef): string[] {
  return [def.resource, def.singular, def.kind.toLowerCase(), ...(def.shortNames ?? [])];
}

/** The row a name given on a command line resolves to, if any. */
export function resolveResource(table: readonly ResourceDef[], given: string): ResourceDef | undefined {
  const name = given.toLowerCase();
  const dot = name.indexOf('.');
  const [bare, group] = dot > 0 ? [name.slice(0, dot), name.slice(dot + 1)] : [name, undefined];
  const matches = table.filter((d) => namesOf(d).includes(bare) && (group === undefined || d.group === group));
  return matches.find((d) => d.group === '') ?? matches[0];
}

/** The rows of a category (`all`), in discovery's order. */
export function categoryMembers(table: readonly ResourceDef[], category: string): ResourceDef[] {
  const groups = [...new Set(table.map((d) => d.group))];
  return (
    table
      .filter((d) => d.categories?.includes(category))
      // A kind served at several versions is one member: its first row.
      .filter((d, i, rows) => rows.findIndex((o) => o.group === d.group && o.resource === d.resource) === i)
      .sort((a, b) => groups.indexOf(a.group) - groups.indexOf(b.group) || a.resource.localeCompare(b.resource))
  );
}

/** `/api/v1[/namespaces/NS]/RESOURCE[/NAME]` (`/apis/GROUP/VERSION/…` outside the core group); a namespaced kind without ns: every namespace. */
export function resourcePath(def: ResourceDef, ns: string | undefined, name?: string): string {
  const root = def.group ? `/apis/${groupVersionOf(def)}` : `/api/${def.version}`;
  const base = def.namespaced && ns !== undefined ? `${root}/namespaces/${encodeURIComponent(ns)}` : root;
  return `${base}/${def.resource}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
}

/** The names of the served kinds, as a `get` without a type lists them. */
export function resourceChoices(table: readonly ResourceDef[]): string[] {
  return [...new Set(table.filter((d) => d.verbs.includes('list') && d.group !== 'metrics.k8s.io').map((d) => d.resource))];
}
