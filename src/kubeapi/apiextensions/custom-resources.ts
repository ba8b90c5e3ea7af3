// What an established CustomResourceDefinition serves: the object store's strategy for its objects
// (decoded in any served version and stored in the storage version with apiVersion rewritten, as
// conversion None; unknown fields pruned, defaults applied, then validated against the version's
// OpenAPI v3 schema) and the resource table's rows of each served version (scope, short names,
// categories, verbs, status and scale subresources, selectableFields, the Table of its
// additionalPrinterColumns with NAME first and AGE by default).
// Upstream: apiextensions-apiserver pkg/apiserver/customresource_handler.go (crdInfo), pkg/registry/customresource
// (strategy.go, tableconvertor).

import { apiSchema, type Schema } from '../../api/schema.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { jsonPathValues } from '../../printers/jsonpath.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject, ObjectStrategy, Storage } from '../backend.js';
import { groupVersionOf, type ResourceDef, type Verb } from '../resource-def.js';
import { storageVersion, type CRDVersion, type CustomResourceDefinition, type PrinterColumn } from './crd.js';
import { applyDefaults, prune, validateValue, type JSONSchemaProps } from './structural-schema.js';

const allVerbs: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The kind's decoding schema in one version: metadata as every object's, the schema's top-level fields as they come (pruned after). */
function decodingSchema(typeName: string, root: JSONSchemaProps | undefined): Schema {
  const fields: Schema['types'][string]['fields'] = {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
  };
  for (const k of Object.keys(root?.properties ?? {})) if (!(k in fields)) fields[k] = { type: 'any' };
  return { source: apiSchema.source, types: { ...apiSchema.types, [typeName]: { fields } } };
}

function schemaOf(v: CRDVersion | undefined): JSONSchemaProps | undefined {
  return v?.schema?.openAPIV3Schema;
}

/** A created object's status where the status is a subresource: the schema's defaults of an absent status. */
function initialStatus(root: JSONSchemaProps | undefined): Record<string, unknown> {
  const statusSchema = root?.properties?.status;
  const o: Record<string, unknown> = {};
  if (statusSchema?.default !== undefined) applyDefaults(o, { type: 'object', properties: { status: statusSchema } }, 'nested');
  return o.status as Record<string, unknown>;
}

/** The store's strategy for a CRD's objects. */
export function customResourceStrategy(crd: CustomResourceDefinition): ObjectStrategy {
  const { group, names } = crd.spec;
  const stored = storageVersion(crd)!;
  const apiVersion = groupVersionOf({ group, version: stored.name });
  const typeName = (v: string) => `${crd.metadata?.name}/${v}`;
  const schemas = new Map(crd.spec.versions.map((v) => [groupVersionOf({ group, version: v.name }), decodingSchema(typeName(v.name), schemaOf(v))]));
  const root = schemaOf(stored);
  const versions: Record<string, { schemaType: string; toStored(obj: KubeObject): KubeObject }> = {};
  for (const v of crd.spec.versions) {
    if (!v.served || v.name === stored.name) continue;
    versions[groupVersionOf({ group, version: v.name })] = { schemaType: typeName(v.name), toStored: (o) => ({ ...o, apiVersion }) };
  }
  // The decoder reads every version's type from one schema.
  const schema: Schema = { source: apiSchema.source, types: Object.assign({}, ...[...schemas.values()].map((s) => s.types)) as Schema['types'] };
  return {
    kind: names.kind,
    resource: `${names.plural}.${group}`,
    apiVersion,
    namespaced: crd.spec.scope === 'Namespaced',
    schemaType: typeName(stored.name),
    schema,
    versions,
    ...(stored.subresources?.status ? { statusSubresource: true, initialStatus: () => initialStatus(root) } : {}),
    defaults: (o) => {
      prune(o, root);
      applyDefaults(o, root);
      return o;
    },
    validate: (o) => validateValue(o, root),
  };
}

/** The columns of the version's Table: NAME, then its additionalPrinterColumns (AGE when it names none). */
function printerColumns(v: CRDVersion): PrinterColumn[] {
  const cols = v.additionalPrinterColumns ?? [];
  return cols.length > 0 ? cols : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: ageDescription }];
}

function cell(c: PrinterColumn, o: KubeObject, now: number): unknown {
  let values: unknown[];
  try {
    values = jsonPathValues(`{${c.jsonPath}}`, o);
  } catch {
    return null;
  }
  if (values.length === 0 || values[0] === undefined) return null;
  const v = values.length === 1 ? values[0] : values;
  if (c.type === 'date' && typeof v === 'string') return translateTimestampSince(v, now);
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return v;
}

function customTable(v: CRDVersion) {
  const cols = printerColumns(v);
  return (items: readonly KubeObject[], opts: TableOptions) => {
    const columns = [
      col('Name', nameDescription, 0, 'string', 'name'),
      ...cols.map((c) => col(c.name, c.description ?? '', c.priority ?? 0, c.type === 'date' ? 'date' : c.type, c.format ?? '')),
    ];
    const rows = items.map((o) => ({
      cells: [o.metadata?.name ?? '', ...cols.map((c) => cell(c, o, opts.now))],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    }));
    return table(columns, rows as never, opts);
  };
}

/** A field selector's getter for a selectableField's JSONPath (`.spec.color` selects as `spec.color`). */
function selectable(v: CRDVersion): Record<string, (o: KubeObject) => string> {
  const out: Record<string, (o: KubeObject) => string> = {};
  for (const f of v.selectableFields ?? []) {
    out[f.jsonPath.replace(/^\./, '')] = (o) => {
      const [x] = jsonPathValues(`{${f.jsonPath}}`, o);
      return x === undefined || x === null ? '' : String(x);
    };
  }
  return out;
}

const trimDot = (p: string) => p.replace(/^\./, '');

/** The rows a CRD adds to the resource table: one per served version, the same storage, apiVersion rewritten. */
export function customResourceDefs(crd: CustomResourceDefinition): ResourceDef[] {
  const { group, names } = crd.spec;
  const kind = names.kind;
  return crd.spec.versions
    .filter((v) => v.served)
    .map((v): ResourceDef => {
      const apiVersion = groupVersionOf({ group, version: v.name });
      const scale = v.subresources?.scale;
      return {
        group,
        version: v.name,
        kind,
        resource: names.plural,
        singular: names.singular ?? kind.toLowerCase(),
        ...(names.shortNames?.length ? { shortNames: names.shortNames } : {}),
        ...(names.categories?.length ? { categories: names.categories } : {}),
        namespaced: crd.spec.scope === 'Namespaced',
        verbs: allVerbs,
        storage: (b) => {
          const s = b.objects?.storage(kind);
          if (!s || v.storage) return s;
          return convertingStorage(s, apiVersion);
        },
        fieldSelectors: selectable(v),
        table: customTable(v),
        ...(v.subresources?.status ? { status: ['get', 'patch', 'update'] as const } : {}),
        ...(scale
          ? {
              scale: {
                specReplicasPath: trimDot(scale.specReplicasPath),
                statusReplicasPath: trimDot(scale.statusReplicasPath),
                ...(scale.labelSelectorPath ? { labelSelectorPath: trimDot(scale.labelSelectorPath) } : {}),
              },
            }
          : {}),
        customResource: true,
      };
    });
}

/** Conversion None: the stored object with this version's apiVersion, writes sent on as they are (the store rewrites them). */
function convertingStorage(s: Storage, apiVersion: string): Storage {
  const out = (o: KubeObject): KubeObject => ({ ...o, apiVersion });
  const c: Storage = {
    list: () => {
      const l = s.list();
      return { ...l, items: l.items.map(out) };
    },
    get: (ns, name) => {
      const o = s.get(ns, name);
      return o && out(o);
    },
  };
  if (s.create) c.create = async (o, opts) => out(await s.create!(o, opts));
  if (s.update) c.update = async (o, opts) => out(await s.update!(o, opts));
  if (s.updateStatus) c.updateStatus = async (o, opts) => out(await s.updateStatus!(o, opts));
  if (s.delete) c.delete = async (ns, name, opts) => out(await s.delete!(ns, name, opts));
  if (s.watch) c.watch = (rv, on) => s.watch!(rv, (ev) => on(ev.type === 'BOOKMARK' || ev.type === 'ERROR' ? ev : { type: ev.type, object: out(ev.object) }));
  return c;
}
