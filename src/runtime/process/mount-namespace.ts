// Volumes for host processes: a private mount namespace per container (as runc's rootfs setup binds
// a container's mounts, libcontainer/rootfs_linux.go), in which the volume directories the kubelet
// prepared are bound onto their mountPaths; the rest of the host's file system is left as it is.
// As root: unshare(1) --mount with private propagation. As another user: a user namespace too
// (unshare --map-root-user), where the host allows unprivileged user namespaces; the command then
// runs as that user again through a nested user namespace mapping it back (--map-user).
//
// A mountPath that does not exist on the host is made inside the namespace only: the deepest
// ancestor that exists is covered by an overlay (the host's directory below, a tmpfs above, the
// mounts beneath it moved back on top), so the host never sees the new directory or file.
// Bind mounts of the volume directory (not of its files) let the atomic writer's `..data` swap
// of ConfigMap, Secret and projected volumes show through, as in a container.

import { existsSync, readFileSync } from 'node:fs';
import type { Mount } from '../cri.js';

/** Why no mount namespace can be made for this process runtime's containers; undefined when one can. */
export function mountNamespaceProblem(uid: number = process.getuid?.() ?? 0): string | undefined {
  if (process.platform !== 'linux') return 'mount namespaces need Linux';
  if (uid === 0) return undefined;
  const read = (p: string) => {
    try {
      return readFileSync(p, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  if (read('/proc/sys/user/max_user_namespaces') === '0') return 'podvisor is not root and user namespaces are disabled (user.max_user_namespaces is 0)';
  if (read('/proc/sys/kernel/unprivileged_userns_clone') === '0')
    return 'podvisor is not root and unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone is 0)';
  if (read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1')
    return 'podvisor is not root and AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1)';
  return undefined;
}

/**
 * The shell run inside the new namespace: $1 scratch directory, $2 working directory (entered once
 * the mounts are made: it may lie in a volume), $3 count, then (source, target, ro|rw) each, `--`,
 * the command.
 */
const SETUP = String.raw`set -e
scratch=$1; cwd=$2; n=$3; shift 3
mount -t tmpfs -o mode=0700 podvisor-mounts "$scratch"
i=0
covered=
while [ "$n" -gt 0 ]; do
  src=$1; dst=$2; ro=$3; shift 3; n=$((n - 1))
  if [ ! -e "$dst" ] && [ ! -L "$dst" ]; then
    a=$(dirname "$dst")
    while [ ! -e "$a" ]; do a=$(dirname "$a"); done
    a=$(realpath "$a")
    if [ "$a" = / ]; then echo "mountPath $dst: its parent does not exist on this host, and / cannot be covered; create the parent directory on the host" >&2; exit 126; fi
    if ! printf '%s\n' "$covered" | grep -qxF "$a"; then
      i=$((i + 1)); o="$scratch/o$i"
      mkdir "$o" "$o.u" "$o.w"
      mount --rbind "$a" "$o"
      mount -t overlay -o "lowerdir=$o,upperdir=$o.u,workdir=$o.w" overlay "$a"
      while read -r _ _ _ _ mp _; do
        case "$mp" in "$o"/*) mount --move "$mp" "$a/${'${'}mp#"$o"/}" 2>/dev/null || true ;; esac
      done < /proc/self/mountinfo
      covered="$covered
$a"
    fi
    if [ -d "$src" ]; then mkdir -p "$dst"; else mkdir -p "$(dirname "$dst")"; : > "$dst"; fi
  fi
  mount --bind "$src" "$dst"
  if [ "$ro" = ro ]; then mount -o remount,bind,ro "$dst"; fi
done
shift
cd "$cwd"
exec "$@"
`;

export interface MountNamespaceOptions {
  /** unshare(1) and setpriv(1), as found on the host. */
  unshare: string;
  setpriv: string;
  /** An empty directory the namespace's scratch tmpfs covers (under the runtime's root). */
  scratch: string;
  /** The container's working directory. */
  cwd: string;
  /** The runtime's own user: not root means a user namespace as well. */
  hostUid: number;
  hostGid: number;
}

/**
 * The command that runs target in a new mount namespace with mounts bound: unshare, then the
 * setup shell, then the target as its user (setpriv as root; a nested user namespace otherwise).
 * The answer changes no user itself (the user is set inside, after the mounts).
 */
export function mountNamespaceArgv(
  mounts: readonly Mount[],
  target: { file: string; args: string[]; uid?: number; gid?: number },
  o: MountNamespaceOptions,
): { file: string; args: string[] } {
  let command = [target.file, ...target.args];
  if (o.hostUid === 0 && (target.uid !== undefined || target.gid !== undefined)) {
    const uid = target.uid ?? 0;
    const gid = target.gid ?? 0;
    command = [o.setpriv, `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', ...command];
  } else if (o.hostUid !== 0) {
    command = [o.unshare, `--map-user=${o.hostUid}`, `--map-group=${o.hostGid}`, '--', ...command];
  }
  const ns = o.hostUid === 0 ? ['--mount', '--propagation', 'private'] : ['--user', '--map-root-user', '--mount', '--propagation', 'private'];
  const triples = mounts.flatMap((m) => [m.hostPath, m.containerPath, m.readonly ? 'ro' : 'rw']);
  return {
    file: o.unshare,
    args: [...ns, '--', '/bin/sh', '-c', SETUP, 'podvisor-mounts', o.scratch, o.cwd, String(mounts.length), ...triples, '--', ...command],
  };
}

/** Whether path lies at or under one of the mounts' targets (so it exists only inside the namespace). */
export function underMount(mounts: readonly Mount[], path: string): boolean {
  return mounts.some((m) => path === m.containerPath || path.startsWith(m.containerPath.endsWith('/') ? m.containerPath : `${m.containerPath}/`));
}

/** Where unshare(1) is. */
export function findUnshare(): string {
  return ['/usr/bin/unshare', '/bin/unshare'].find((p) => existsSync(p)) ?? 'unshare';
}
