// The containerd podvisor runs for a root dir (as k3s runs its own, pkg/agent/containerd/config.go):
// where its files go under <root>/containerd, and the config.toml written there — the CRI plugin on,
// its own root, state, socket, runc root and opt dir, the root dir's CNI network, the sandbox image,
// the registry hosts directory (containerd's hosts.toml layout), and restrict_oom_score_adj where the
// host refuses negative OOM scores; for a non-root user, what containerd needs in RootlessKit's user
// namespace (the snapshotter that works there, cgroups only where delegated, no AppArmor).

import { join } from 'node:path';

/** Files and directories of the containerd of a root dir. */
export interface ManagedContainerdLayout {
  dir: string;
  config: string;
  socket: string;
  /** containerd's `root` (content, snapshots, metadata) and `state` (tasks, sockets). */
  root: string;
  state: string;
  /** runc's state (its --root), apart from a host containerd's /run/containerd/runc. */
  runcRoot: string;
  /** The opt plugin's directory (otherwise /opt/containerd). */
  opt: string;
  /** The CNI configuration directory the CRI plugin watches. */
  cniConfDir: string;
  /** The registry hosts directory: <host>/hosts.toml per registry (item: --registry-config). */
  certsDir: string;
  log: string;
  /** `<pid> <start time>` of the containerd started for the root dir. */
  pidFile: string;
}

export function managedContainerdLayout(rootDir: string): ManagedContainerdLayout {
  const dir = join(rootDir, 'containerd');
  return {
    dir,
    config: join(dir, 'config.toml'),
    socket: join(dir, 'containerd.sock'),
    root: join(dir, 'root'),
    state: join(dir, 'state'),
    runcRoot: join(dir, 'runc'),
    opt: join(dir, 'opt'),
    cniConfDir: join(dir, 'net.d'),
    certsDir: join(dir, 'certs.d'),
    log: join(dir, 'containerd.log'),
    pidFile: join(dir, 'containerd.pid'),
  };
}

export interface ManagedContainerdOptions {
  sandboxImage: string;
  cniBinDir: string;
  /** The CNI configuration directory (default the layout's own). */
  cniConfDir?: string;
  /** The registry hosts directory (default the layout's own). */
  registryConfigDir?: string;
  /** Root lacks CAP_SYS_RESOURCE: sandboxes may not ask for a negative oom_score_adj. */
  restrictOOMScoreAdj: boolean;
  /**
   * Run in a user namespace under RootlessKit (k3s's rootless template): the snapshotter that works
   * there, cgroups left alone unless a cgroup v2 subtree is delegated, no AppArmor profiles (loading
   * one needs root on the host), and the socket owned by the namespace's root, which is the user.
   */
  rootless?: { snapshotter: string; cgroupDelegated: boolean; fuseOverlayfsSocket?: string };
}

/** A TOML basic string. */
function str(s: string): string {
  return JSON.stringify(s);
}

/** containerd's config.toml (version 2) for the layout. */
export function managedContainerdConfig(layout: ManagedContainerdLayout, opts: ManagedContainerdOptions): string {
  const cri = '[plugins."io.containerd.grpc.v1.cri"';
  return [
    '# Written by podvisor for this root dir; rewritten when the containerd is started.',
    'version = 2',
    `root = ${str(layout.root)}`,
    `state = ${str(layout.state)}`,
    '',
    '[grpc]',
    `  address = ${str(layout.socket)}`,
    '  uid = 0',
    '  gid = 0',
    '',
    ...(opts.rootless?.fuseOverlayfsSocket
      ? ['[proxy_plugins]', '  [proxy_plugins."fuse-overlayfs"]', '    type = "snapshot"', `    address = ${str(opts.rootless.fuseOverlayfsSocket)}`, '']
      : []),
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${str(layout.opt)}`,
    '',
    `${cri}]`,
    `  sandbox_image = ${str(opts.sandboxImage)}`,
    `  restrict_oom_score_adj = ${String(opts.restrictOOMScoreAdj || Boolean(opts.rootless))}`,
    ...(opts.rootless ? [`  disable_cgroup = ${String(!opts.rootless.cgroupDelegated)}`, '  disable_apparmor = true'] : []),
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    `  ${cri}.containerd]`,
    '    default_runtime_name = "runc"',
    ...(opts.rootless ? [`    snapshotter = ${str(opts.rootless.snapshotter)}`] : []),
    `    ${cri}.containerd.runtimes.runc]`,
    '      runtime_type = "io.containerd.runc.v2"',
    `      ${cri}.containerd.runtimes.runc.options]`,
    `        Root = ${str(layout.runcRoot)}`,
    `  ${cri}.cni]`,
    `    bin_dir = ${str(opts.cniBinDir)}`,
    `    conf_dir = ${str(opts.cniConfDir ?? layout.cniConfDir)}`,
    `  ${cri}.registry]`,
    `    config_path = ${str(opts.registryConfigDir ?? layout.certsDir)}`,
    '',
  ].join('\n');
}
