// Descriptors the agent inherited from whoever started it: Node opens its own close-on-exec, but an
// inherited one without that flag would pass on to every container. The entry point closes them.

import { builtin } from './builtins.js';

const { closeSync, readdirSync, readFileSync } = builtin('node:fs');

/** O_CLOEXEC in /proc/<pid>/fdinfo's octal `flags`. */
const O_CLOEXEC = 0o2000000;

/** Descriptors above stdio that a spawned process would inherit (no close-on-exec), from /proc/self. */
export function inheritableFds(procSelf = '/proc/self'): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync(`${procSelf}/fd`);
  } catch {
    return out;
  }
  for (const n of names) {
    const fd = Number(n);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const m = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`${procSelf}/fdinfo/${fd}`, 'utf8'));
      if (m && (parseInt(m[1]!, 8) & O_CLOEXEC) === 0) out.push(fd);
    } catch {
      // closed meanwhile (the directory's own descriptor)
    }
  }
  return out;
}

/**
 * Closes every inherited descriptor a container would otherwise receive, except Node's IPC channel
 * (NODE_CHANNEL_FD). Only for the process's entry point: nothing in the agent uses them.
 */
export function closeInheritedFds(env: NodeJS.ProcessEnv = process.env): number[] {
  const keep = env.NODE_CHANNEL_FD !== undefined ? Number(env.NODE_CHANNEL_FD) : -1;
  const closed: number[] = [];
  for (const fd of inheritableFds()) {
    if (fd === keep) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // not ours to close
    }
  }
  return closed;
}
