// Equality of JSON-like values as their JSON would compare (a member that is undefined counts as
// absent), without serializing them: the status manager's change check on every sync.

/** True when a and b have the same JSON content (key order aside). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    // NaN and ±Infinity serialize as null; nothing in a status holds them, so plain identity suffices.
    return false;
  }
  const arrA = Array.isArray(a);
  if (arrA !== Array.isArray(b)) return false;
  if (arrA) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let countX = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    countX++;
    if (!jsonEqual(x[k], y[k])) return false;
  }
  let countY = 0;
  for (const k in y) if (y[k] !== undefined) countY++;
  return countX === countY;
}
