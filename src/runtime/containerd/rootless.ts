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

/**
 * The snapshotter containerd uses in the user namespace, as containerd-rootless-setuptool.sh and k3s
 * choose it: the kernel's overlayfs where a user namespace may mount it (Linux 5.11 and later), else
 * fuse-overlayfs through its snapshotter plugin (containerd-fuse-overlayfs-grpc) where installed, else
 * native (a full copy per layer: slow and large, but it works anywhere).
 */
export type RootlessSnapshotter = 'overlayfs' | 'fuse-overlayfs' | 'native';

export function rootlessSnapshotter(kernelRelease: string, onPathFn: (cmd: string) => string | undefined): RootlessSnapshotter {
  const [major = 0, minor = 0] = kernelRelease.split(/[.-]/).map((n) => Number.parseInt(n, 10) || 0);
  if (major > 5 || (major === 5 && minor >= 11)) return 'overlayfs';
  if (onPathFn('fuse-overlayfs') && onPathFn('containerd-fuse-overlayfs-grpc')) return 'fuse-overlayfs';
  return 'native';
}

/**
 * Whether cgroup limits can be enforced for the user's containers: a cgroup v2 hierarchy whose
 * subtree for this process (systemd's user@<uid>.service delegation) the user may write, with the
 * memory and cpu controllers available there. Otherwise runc's limits are not applied (cgroupfs with
 * nothing delegated) and containerd is told so (disable_cgroup).
 */
export function delegatedCgroup(h: Pick<RootlessHost, 'readFile' | 'canOpen'>): string | undefined {
  const own = h
    .readFile('/proc/self/cgroup')
    ?.split('\n')
    .find((l) => l.startsWith('0::'));
  if (!own || h.readFile('/sys/fs/cgroup/cgroup.controllers') === undefined) return undefined;
  const dir = `/sys/fs/cgroup${own.slice(3).trim()}`.replace(/\/$/, '');
  const controllers = h.readFile(`${dir}/cgroup.controllers`)?.split(/\s+/) ?? [];
  if (!controllers.includes('memory') || !controllers.includes('cpu')) return undefined;
  return h.canOpen(`${dir}/cgroup.procs`) && h.canOpen(`${dir}/cgroup.subtree_control`) ? dir : undefined;
}

/** RootlessKit's state directory for a containerd directory (its api.sock and child_pid are there). */
export function rootlessKitStateDir(containerdDir: string): string {
  return `${containerdDir}/rootlesskit`;
}

/**
 * The argv that runs containerd under RootlessKit, as nerdctl's containerd-rootless.sh does: the pods'
 * network in RootlessKit's namespace (slirp4netns to the outside, the host's loopback out of reach),
 * ports published through the builtin port driver, /etc, /run and /var/lib copied up so that containerd
 * and the CNI plugins may write there. Inside, the links copy-up left to the host's own files that the
 * user may not write (containerd's, the CNI plugins' IPAM, the iptables lock, the network namespaces)
 * are removed first, then containerd is exec'd (so that RootlessKit's signals reach it).
 */
export function rootlessKitCommand(opts: {
  rootlesskit: string;
  stateDir: string;
  containerd: string;
  config: string;
  /** fuse-overlayfs's snapshotter plugin, started beside containerd on its socket. */
  fuseOverlayfs?: { binary: string; socket: string; root: string };
}): string[] {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const inside = [
    'rm -rf /run/containerd /run/xtables.lock /run/netns /var/lib/containerd /var/lib/cni /etc/containerd /etc/cni',
    ...(opts.fuseOverlayfs ? [`${q(opts.fuseOverlayfs.binary)} ${q(opts.fuseOverlayfs.socket)} ${q(opts.fuseOverlayfs.root)} &`] : []),
    `exec ${q(opts.containerd)} --config ${q(opts.config)}`,
  ].join('\n');
  return [
    opts.rootlesskit,
    '--net=slirp4netns',
    '--mtu=65520',
    '--slirp4netns-sandbox=auto',
    '--slirp4netns-seccomp=auto',
    '--disable-host-loopback',
    '--port-driver=builtin',
    '--copy-up=/etc',
    '--copy-up=/run',
    '--copy-up=/var/lib',
    '--propagation=rslave',
    `--state-dir=${opts.stateDir}`,
    '/bin/sh',
    '-c',
    inside,
  ];
}
