// podvisor's version, read from package.json (two levels above dist/src/cli, three above src/cli).

import { readFileSync } from 'node:fs';

export function podvisorVersion(): string {
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'podvisor' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}
