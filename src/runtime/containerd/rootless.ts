// What a non-root user's host needs for containerd under RootlessKit, as containerd-rootless.sh and
// k3s's rootless mode need it: RootlessKit, slirp4netns and newuidmap/newgidmap (Debian's rootlesskit,
// slirp4netns, uidmap); user namespaces an unprivileged user may create; a range of subordinate uids and
// gids for the user in /etc/subuid and /etc/subgid; a tap device slirp4netns can open (/dev/net/tun);
// and, for cgroup limits to be enforced, a cgroup v2 subtree delegated to the user (else reported as
// not enforced). Each missing part comes with its fix.

import { accessSync, constants, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';

/** One thing the host lacks, with its fix (host.ts's HostProblem). */
export interface RootlessProblem {
  what: string;
  fix: string;
}

/** The subordinate ids RootlessKit maps (containerd-rootless.sh and Podman want 65536). */
export const SUBID_RANGE = 65536;

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** The size of the user's range in an /etc/subuid-style file (by name or uid). */
export function subordinateRange(text: string | undefined, name: string, uid: number): number {
  let total = 0;
  for (const line of (text ?? '').split('\n')) {
    const [who, , count] = line.trim().split(':');
    if (who === name || who === String(uid)) total += Number(count) || 0;
  }
  return total;
}

export interface RootlessHost {
  uid: number;
  name: string;
  onPath(cmd: string): string | undefined;
  readFile(path: string): string | undefined;
  /** Whether the user may open path for reading and writing. */
  canOpen(path: string): boolean;
}

/** This process's host and user. */
export function thisRootlessHost(onPath: (cmd: string) => string | undefined, uid: number): RootlessHost {
  return {
    uid,
    name: userInfo().username,
    onPath,
    readFile: read,
    canOpen: (path) => {
      try {
        accessSync(path, constants.R_OK | constants.W_OK);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** What the host lacks for containerd under RootlessKit for this user (empty: nothing). */
export function rootlessProblems(h: RootlessHost): RootlessProblem[] {
  const out: RootlessProblem[] = [];
  for (const [cmd, pkg] of [
    ['rootlesskit', 'rootlesskit'],
    ['slirp4netns', 'slirp4netns'],
    ['newuidmap', 'uidmap'],
    ['newgidmap', 'uidmap'],
  ] as const) {
    if (!h.onPath(cmd)) out.push({ what: `${cmd} is not on PATH`, fix: `apt-get install ${pkg}` });
  }
  const maxNs = Number(h.readFile('/proc/sys/user/max_user_namespaces')?.trim() ?? '1');
  if (maxNs === 0) out.push({ what: 'user namespaces are disabled (user.max_user_namespaces = 0)', fix: 'sysctl -w user.max_user_namespaces=28633' });
  if (h.readFile('/proc/sys/kernel/unprivileged_userns_clone')?.trim() === '0')
    out.push({ what: 'unprivileged users may not create user namespaces', fix: 'sysctl -w kernel.unprivileged_userns_clone=1' });
  if (h.readFile('/proc/sys/kernel/apparmor_restrict_unprivileged_userns')?.trim() === '1')
    out.push({ what: 'AppArmor restricts unprivileged user namespaces', fix: 'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0' });
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    const n = subordinateRange(h.readFile(file), h.name, h.uid);
    if (n < SUBID_RANGE)
      out.push({
        what: `${file} gives ${h.name} ${n} subordinate ids (${SUBID_RANGE} needed)`,
        fix: `usermod --add-subuids 100000-165535 --add-subgids 100000-165535 ${h.name} (as root; any free range of ${SUBID_RANGE})`,
      });
  }
  if (!h.canOpen('/dev/net/tun'))
    out.push({ what: `/dev/net/tun cannot be opened by ${h.name}: slirp4netns cannot make the pods' tap device`, fix: 'chmod 0666 /dev/net/tun (as root)' });
  return out;
}
