// The pod-template-hash label of a Deployment's ReplicaSets (pkg/controller/controller_utils.go
// ComputeHash): FNV-32a of the template, then the collisionCount's four little-endian bytes, the
// decimal of the sum rendered with rand.SafeEncodeString. The template is hashed as its canonical JSON
// (upstream hashes Go's printed struct), so the value differs from a cluster's for the same template.

import type { PodTemplateSpec } from '../api/types.js';
import { canonicalJSON } from '../api/defaults.js';

const alphanums = 'bcdfghjklmnpqrstvwxz2456789';

function fnv32a(bytes: Uint8Array, seed = 0x811c9dc5): number {
  let h = seed;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** rand.SafeEncodeString: each character mapped into an alphabet without vowels or look-alikes. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += alphanums[s.charCodeAt(i) % alphanums.length];
  return out;
}

export function computeHash(template: PodTemplateSpec | undefined, collisionCount: number | undefined): string {
  let h = fnv32a(Buffer.from(canonicalJSON(template ?? {}), 'utf8'));
  if (collisionCount !== undefined) {
    const c = Buffer.alloc(4);
    c.writeUInt32LE(collisionCount >>> 0);
    h = fnv32a(c, h);
  }
  return safeEncodeString(String(h));
}
