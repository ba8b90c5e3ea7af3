// Node's built-in modules through require, for the modules every command's start-up loads. On Node 20
// an ESM import of a built-in builds a module facade over all its exports, reading each lazy getter
// (node:fs loads fs/promises, streams and readline that way): ~3 ms for node:fs and ~7 ms for
// node:crypto, where require takes microseconds. Elsewhere, plain imports are the rule.

import { createRequire } from 'node:module';

interface Builtins {
  'node:child_process': typeof import('node:child_process');
  'node:crypto': typeof import('node:crypto');
  'node:events': typeof import('node:events');
  'node:fs': typeof import('node:fs');
  'node:os': typeof import('node:os');
  'node:path': typeof import('node:path');
  'node:url': typeof import('node:url');
  'node:util': typeof import('node:util');
}

const load = createRequire(import.meta.url);

/** The built-in module id, as `import * as m from id` would give it. */
export function builtin<K extends keyof Builtins>(id: K): Builtins[K] {
  return load(id) as Builtins[K];
}
