// The resources served now: the static resource table plus the rows a source adds at run time (the
// established CustomResourceDefinitions' resources), indexed anew when that source changes. The REST
// handler's routing and discovery (legacy and aggregated) read the index it gives for each request.
// Upstream: the apiserver's delegation chain to apiextensions-apiserver, whose crdHandler serves the
// CRDs' resources beside the built-in groups.

import type { ResourceDef } from './resource-def.js';
import { ResourceIndex } from './resource-table.js';

/** Rows added at run time; `rows()` gives the same array until they change. */
export interface ResourceSource {
  rows(): readonly ResourceDef[];
}

export class ResourceRegistry {
  private built?: { rows: readonly ResourceDef[]; index: ResourceIndex };

  constructor(
    private readonly table: readonly ResourceDef[],
    private readonly source?: ResourceSource,
  ) {}

  /** The index of the table and the source's current rows (a row of the table wins over a source's row of the same path). */
  index(): ResourceIndex {
    const rows = this.source?.rows() ?? [];
    if (this.built?.rows === rows) return this.built.index;
    const taken = new ResourceIndex(this.table);
    const extra = rows.filter((d) => !taken.lookup(d.group, d.version, d.resource));
    this.built = { rows, index: extra.length > 0 ? new ResourceIndex([...this.table, ...extra]) : taken };
    return this.built.index;
  }
}
