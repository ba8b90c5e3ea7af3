// Objects with their fields in the order the API server writes them: Go's declaration order of each
// struct (field-order.generated.json, see scripts/gen-field-order.mjs), map keys sorted as Go
// marshals maps, fields the order does not know after the known ones, sorted.

import { createRequire } from 'node:module';
// A type-only import puts the JSON in the program, so tsc copies it next to the compiled module.
import type generatedJson from './field-order.generated.json';

/** [name] for a scalar, [name, struct] for a struct (or list of them), [name, struct|null, 'map'] for a map. */
type FieldEntry = [string] | [string, string] | [string, string | null, string];

interface FieldOrder {
  types: Record<string, FieldEntry[]>;
}

let order: FieldOrder | undefined;

function loadOrder(): FieldOrder {
  // Read on first use only: commands that print no object never parse it.
  order ??= createRequire(import.meta.url)('./field-order.generated.json') as typeof generatedJson as unknown as FieldOrder;
  return order;
}

/** The struct of a top-level object of a v1 kind podvisor prints, by its apiVersion and kind. */
function typeOfKind(value: Record<string, unknown>): string | undefined {
  if (value.apiVersion !== 'v1' || typeof value.kind !== 'string') return undefined;
  const name = `core/v1.${value.kind}`;
  return loadOrder().types[name] ? name : undefined;
}

/**
 * A deep copy of value with every object's keys in the API server's order (undefined members
 * dropped). typeName is the struct value is (a v1 object's own kind when omitted); an object of
 * unknown type has its keys sorted, as a Go map.
 */
export function inApiOrder(value: unknown, typeName?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => inApiOrder(v, typeName));
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  const type = typeName ?? typeOfKind(obj);
  const fields = type ? loadOrder().types[type] : undefined;
  const out: Record<string, unknown> = {};
  if (fields) {
    for (const [name, ref, map] of fields) {
      const v = obj[name];
      if (v === undefined) continue;
      out[name] = map ? mapInOrder(v, ref ?? undefined) : inApiOrder(v, ref ?? undefined);
    }
  }
  for (const k of Object.keys(obj).sort()) {
    if (k in out || obj[k] === undefined) continue;
    out[k] = inApiOrder(obj[k]);
  }
  return out;
}

function mapInOrder(value: unknown, valueType: string | undefined): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return inApiOrder(value);
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) if (obj[k] !== undefined) out[k] = inApiOrder(obj[k], valueType);
  return out;
}
