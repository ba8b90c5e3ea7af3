// What containerd under RootlessKit needs of the host, judged for a user on an injected host: each
// missing part named with its fix (packages, sysctls, the subordinate id range, /dev/net/tun).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  delegatedCgroup,
  rootlessKitCommand,
  rootlessKitStateDir,
  rootlessProblems,
  rootlessSnapshotter,
  subordinateRange,
  type RootlessHost,
} from '../../../src/runtime/containerd/rootless.js';

function host(over: Partial<RootlessHost> & { files?: Record<string, string> } = {}): RootlessHost {
  const files = over.files ?? { '/etc/subuid': 'dev:100000:65536\n', '/etc/subgid': '1001:100000:65536\n', '/proc/sys/user/max_user_namespaces': '1000\n' };
  return { uid: 1001, name: 'dev', onPath: (c) => `/usr/bin/${c}`, readFile: (p) => files[p], canOpen: () => true, ...over };
}

test('a host with everything: no problem', () => {
  assert.deepEqual(rootlessProblems(host()), []);
});

test('subordinate ranges are counted by name or uid, summed', () => {
  assert.equal(subordinateRange('dev:100000:1000\n1001:200000:64536\nother:1:65536\n', 'dev', 1001), 65536);
  assert.equal(subordinateRange(undefined, 'dev', 1001), 0);
});

test('each missing part with its fix', () => {
  const problems = rootlessProblems(
    host({
      onPath: (c) => (c === 'slirp4netns' || c === 'newuidmap' ? undefined : `/usr/bin/${c}`),
      files: { '/etc/subuid': 'other:100000:65536\n', '/etc/subgid': 'dev:100000:65536\n', '/proc/sys/kernel/unprivileged_userns_clone': '0\n' },
      canOpen: () => false,
    }),
  );
  assert.deepEqual(problems, [
    { what: 'slirp4netns is not on PATH', fix: 'apt-get install slirp4netns' },
    { what: 'newuidmap is not on PATH', fix: 'apt-get install uidmap' },
    { what: 'unprivileged users may not create user namespaces', fix: 'sysctl -w kernel.unprivileged_userns_clone=1' },
    {
      what: '/etc/subuid gives dev 0 subordinate ids (65536 needed)',
      fix: 'usermod --add-subuids 100000-165535 --add-subgids 100000-165535 dev (as root; any free range of 65536)',
    },
    { what: "/dev/net/tun cannot be opened by dev: slirp4netns cannot make the pods' tap device", fix: 'chmod 0666 /dev/net/tun (as root)' },
  ]);
});

test('the snapshotter: overlayfs from Linux 5.11, else fuse-overlayfs with its plugin, else native', () => {
  const all = (c: string) => `/usr/bin/${c}`;
  assert.equal(rootlessSnapshotter('6.1.0-18-amd64', all), 'overlayfs');
  assert.equal(rootlessSnapshotter('5.11.0', all), 'overlayfs');
  assert.equal(rootlessSnapshotter('5.10.0-28-amd64', all), 'fuse-overlayfs');
  assert.equal(
    rootlessSnapshotter('5.10.0', (c) => (c === 'fuse-overlayfs' ? all(c) : undefined)),
    'native',
  );
  assert.equal(
    rootlessSnapshotter('4.19.0', () => undefined),
    'native',
  );
});

test('cgroup limits only where a cgroup v2 subtree with cpu and memory is delegated and writable', () => {
  const files: Record<string, string> = {
    '/proc/self/cgroup': '0::/user.slice/user-1001.slice/user@1001.service/app.slice\n',
    '/sys/fs/cgroup/cgroup.controllers': 'cpuset cpu io memory pids\n',
    '/sys/fs/cgroup/user.slice/user-1001.slice/user@1001.service/app.slice/cgroup.controllers': 'cpu memory pids\n',
  };
  const writable = new Set(['cgroup.procs', 'cgroup.subtree_control'].map((f) => `/sys/fs/cgroup/user.slice/user-1001.slice/user@1001.service/app.slice/${f}`));
  const h = { readFile: (p: string) => files[p], canOpen: (p: string) => writable.has(p) };
  assert.equal(delegatedCgroup(h), '/sys/fs/cgroup/user.slice/user-1001.slice/user@1001.service/app.slice');
  assert.equal(delegatedCgroup({ ...h, canOpen: () => false }), undefined, 'not writable: not delegated');
  assert.equal(delegatedCgroup({ ...h, readFile: (p) => (p === '/sys/fs/cgroup/cgroup.controllers' ? undefined : files[p]) }), undefined, 'cgroup v1');
  assert.equal(
    delegatedCgroup({ ...h, readFile: (p) => (p.endsWith('app.slice/cgroup.controllers') ? 'pids\n' : files[p]) }),
    undefined,
    'no memory controller',
  );
});

test('RootlessKit runs a shell that clears the host links and execs containerd', () => {
  const argv = rootlessKitCommand({
    rootlesskit: '/usr/bin/rootlesskit',
    stateDir: rootlessKitStateDir('/home/dev/.podvisor/containerd'),
    containerd: '/usr/bin/containerd',
    config: "/home/dev/it's/config.toml",
  });
  assert.deepEqual(argv.slice(0, 13), [
    '/usr/bin/rootlesskit',
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
    '--state-dir=/home/dev/.podvisor/containerd/rootlesskit',
    '/bin/sh',
  ]);
  assert.equal(argv[13], '-c');
  assert.match(argv[14]!, /^rm -rf \/run\/containerd \/run\/xtables\.lock \/run\/netns /);
  assert.match(argv[14]!, /\nexec '\/usr\/bin\/containerd' --config '\/home\/dev\/it'\\''s\/config\.toml'$/);
  const fuse = rootlessKitCommand({
    rootlesskit: 'rootlesskit',
    stateDir: '/s',
    containerd: 'containerd',
    config: '/c',
    fuseOverlayfs: { binary: '/usr/bin/containerd-fuse-overlayfs-grpc', socket: '/d/fuse.sock', root: '/d/root/fuse' },
  });
  assert.match(fuse.at(-1)!, /'\/usr\/bin\/containerd-fuse-overlayfs-grpc' '\/d\/fuse\.sock' '\/d\/root\/fuse' &\nexec 'containerd'/);
});
