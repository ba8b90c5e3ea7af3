// A kind served at more than one version (autoscaling/v2 and v1 HorizontalPodAutoscalers): the row
// of each further version is the stored version's row with a storage that converts every object on
// its way out, watch events included, and sends writes on in their own version (the store's strategy
// decodes them strictly against that version's schema and converts them: ObjectStrategy.versions),
// with a Table printed from the stored form. Upstream: the apiserver's per-version REST storage over
// one internal object, with the scheme's conversion functions.

import type { KubeObject, Storage } from './backend.js';
import { groupVersionOf, type ResourceDef, type VersionConversion } from './resource-def.js';

function convertingStorage(s: Storage, def: ResourceDef, v: VersionConversion): Storage {
  const out = (o: KubeObject) => v.fromStored(o);
  const apiVersion = groupVersionOf({ group: def.group, version: v.version });
  const into = (raw: KubeObject): KubeObject => ({ ...raw, apiVersion });
  const converted: Storage = {
    list: () => {
      const l = s.list();
      return { ...l, items: l.items.map(out) };
    },
    get: (ns, name) => {
      const o = s.get(ns, name);
      return o && out(o);
    },
  };
  if (s.create) converted.create = async (o, opts) => out(await s.create!(into(o), opts));
  if (s.update) converted.update = async (o, opts) => out(await s.update!(into(o), opts));
  if (s.updateStatus) converted.updateStatus = async (o, opts) => out(await s.updateStatus!(into(o), opts));
  if (s.delete) converted.delete = async (ns, name, opts) => out(await s.delete!(ns, name, opts));
  if (s.watch)
    converted.watch = (rv, on) => s.watch!(rv, (ev) => on(ev.type === 'BOOKMARK' || ev.type === 'ERROR' ? ev : { type: ev.type, object: out(ev.object) }));
  return converted;
}

/** The row of each version a kind is served at: the stored version's, then one per further version. */
export function servedVersions(def: ResourceDef): ResourceDef[] {
  return [
    def,
    ...(def.otherVersions ?? []).map((v): ResourceDef => ({
      ...def,
      version: v.version,
      otherVersions: undefined,
      storage: (b, ctx) => {
        const s = def.storage(b, ctx);
        return s && convertingStorage(s, def, v);
      },
      ...(def.table
        ? {
            table: (items, opts) =>
              def.table!(
                items.map((o) => v.toStored(o)),
                opts,
              ),
          }
        : {}),
    })),
  ];
}
