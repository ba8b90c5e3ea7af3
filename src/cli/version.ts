// podvisor's version, read from package.json (two levels above dist/src/cli, three above src/cli).

import { builtin } from '../util/builtins.js';

export function podvisorVersion(): string {
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(builtin('node:fs').readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'podvisor' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}
