// Objects' keys in the sorted order Go's maps marshal in (kubectl's unstructured printing), kept apart
// from the YAML printer so JSON output loads no YAML library.

/** A deep copy with every object's keys sorted and undefined members dropped, as Go's maps marshal. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}
