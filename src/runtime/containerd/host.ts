// What the host offers the containerd podvisor runs: its binaries on PATH, the CNI plugins' directory,
// whether root may set negative OOM scores (CAP_SYS_RESOURCE), and what is missing, by package.

import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rootlessProblems, thisRootlessHost } from './rootless.js';

const CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'];
/** Where distributions put the CNI plugins: Debian's package, then upstream's tarball. */
export const CNI_BIN_DIRS = ['/usr/lib/cni', '/opt/cni/bin'];
/** CAP_SYS_RESOURCE's bit in a capability mask. */
const CAP_SYS_RESOURCE = 24n;

/** The executable named cmd on PATH, if any. */
export function onPath(cmd: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = join(dir, cmd);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The first directory holding every CNI plugin podvisor's network uses. */
export function cniBinDir(): string | undefined {
  return CNI_BIN_DIRS.find((d) => CNI_PLUGINS.every((p) => existsSync(join(d, p))));
}

/** Whether this process's bounding set holds CAP_SYS_RESOURCE (needed for a negative oom_score_adj). */
export function hasSysResource(): boolean {
  try {
    const m = /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return !m || ((BigInt(`0x${m[1]}`) >> CAP_SYS_RESOURCE) & 1n) === 1n;
  } catch {
    return true;
  }
}

/** One thing the host lacks for the managed containerd, with the package that brings it. */
export interface HostProblem {
  what: string;
  fix: string;
}

/** What this host lacks to run its own containerd (empty: nothing). */
export function managedContainerdProblems(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? 0): HostProblem[] {
  const out: HostProblem[] = [];
  // A normal user's containerd runs under RootlessKit: what that needs besides, each with its fix.
  if (uid !== 0) out.push(...rootlessProblems(thisRootlessHost((cmd) => onPath(cmd, env), uid)));
  const missing = new Set<string>();
  for (const [cmd, pkg] of [
    ['containerd', 'containerd'],
    ['containerd-shim-runc-v2', 'containerd'],
    ['ctr', 'containerd'],
    ['runc', 'runc'],
  ] as const) {
    if (!onPath(cmd, env)) {
      out.push({ what: `${cmd} is not on PATH`, fix: `apt-get install ${pkg}` });
      missing.add(pkg);
    }
  }
  if (!cniBinDir()) {
    out.push({
      what: `the CNI plugins ${CNI_PLUGINS.join(', ')} are not in ${CNI_BIN_DIRS.join(' or ')}`,
      fix: 'apt-get install containernetworking-plugins',
    });
  }
  return out;
}
