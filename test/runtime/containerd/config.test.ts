// The containerd podvisor runs for a root dir: its layout, the config.toml it writes, the settings that
// ask for it, the mounts found under a directory, and its own pause image.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentSettingsOf, InvalidSettingError } from '../../../src/agent/settings.js';
import { managedContainerdConfig, managedContainerdLayout } from '../../../src/runtime/containerd/config.js';
import { mountsUnder } from '../../../src/runtime/containerd/managed.js';
import { LOCAL_PAUSE_IMAGE, pauseExecutable, pauseImageArchive } from '../../../src/runtime/containerd/pause-image.js';

test('the config: CRI plugin with its own root, state, socket, runc root, CNI network, registry hosts and sandbox image', () => {
  const layout = managedContainerdLayout('/var/lib/podvisor');
  const text = managedContainerdConfig(layout, { sandboxImage: 'pause:local', cniBinDir: '/usr/lib/cni', restrictOOMScoreAdj: true });
  for (const line of [
    'version = 2',
    'root = "/var/lib/podvisor/containerd/root"',
    'state = "/var/lib/podvisor/containerd/state"',
    '  address = "/var/lib/podvisor/containerd/containerd.sock"',
    '[plugins."io.containerd.grpc.v1.cri"]',
    '  sandbox_image = "pause:local"',
    '  restrict_oom_score_adj = true',
    '  stream_server_port = "0"',
    '        Root = "/var/lib/podvisor/containerd/runc"',
    '    bin_dir = "/usr/lib/cni"',
    '    conf_dir = "/var/lib/podvisor/containerd/net.d"',
    '    config_path = "/var/lib/podvisor/containerd/certs.d"',
  ]) {
    assert.ok(text.split('\n').includes(line), `${line}\nin\n${text}`);
  }
  const other = managedContainerdConfig(layout, {
    sandboxImage: 'x"y',
    cniBinDir: '/opt/cni/bin',
    cniConfDir: '/etc/cni/net.d',
    registryConfigDir: '/etc/containerd/certs.d',
    restrictOOMScoreAdj: false,
  });
  assert.match(other, /^ {2}sandbox_image = "x\\"y"$/m);
  assert.match(other, /^ {2}restrict_oom_score_adj = false$/m);
  assert.match(other, /^ {4}conf_dir = "\/etc\/cni\/net.d"$/m);
  assert.match(other, /^ {4}config_path = "\/etc\/containerd\/certs.d"$/m);
});

test("settings: --runtime=containerd without an endpoint is the root dir's containerd; its flags need it", () => {
  const place = { env: {}, cwd: '/work' };
  const s = agentSettingsOf({ runtime: 'containerd', 'root-dir': 'state', 'pod-infra-container-image': 'pause:local', 'registry-config': 'hosts' }, place);
  assert.equal(s.runtimeEndpoint, 'unix:///work/state/containerd/containerd.sock');
  assert.equal(s.cniConfDir, '/work/state/containerd/net.d');
  assert.deepEqual(s.managedContainerd, {
    rootDir: '/work/state',
    sandboxImage: 'pause:local',
    cniConfDir: '/work/state/containerd/net.d',
    registryConfigDir: '/work/hosts',
  });
  const given = agentSettingsOf({ runtime: 'containerd', 'container-runtime-endpoint': 'unix:///run/containerd/containerd.sock' }, place);
  assert.equal(given.managedContainerd, undefined);
  assert.equal(given.cniConfDir, undefined);
  assert.throws(
    () => agentSettingsOf({ runtime: 'containerd', 'container-runtime-endpoint': 'unix:///x.sock', 'pod-infra-container-image': 'p' }, place),
    (e: Error) =>
      e instanceof InvalidSettingError && /"--pod-infra-container-image" needs --runtime=containerd without --container-runtime-endpoint/.test(e.message),
  );
  assert.throws(() => agentSettingsOf({ 'registry-config': 'd' }, place), /"--registry-config" needs --runtime=containerd/);
  assert.throws(() => agentSettingsOf({ runtime: 'containerd', 'root-dir': `/${'r'.repeat(80)}` }, place), /too long for containerd's sockets/);
});

test('mountsUnder: the directory and below, deepest first, octal escapes decoded', () => {
  const info = [
    '36 25 0:32 / /var/lib/podvisor rw - tmpfs tmpfs rw',
    '37 36 0:33 / /var/lib/podvisor/containerd/state/io.containerd.grpc.v1.cri/sandboxes/abc/shm rw - tmpfs shm rw',
    '38 25 0:34 / /var/lib/podvisor-other rw - tmpfs tmpfs rw',
    '39 36 0:35 / /var/lib/podvisor/with\\040space rw - tmpfs tmpfs rw',
  ].join('\n');
  assert.deepEqual(mountsUnder('/var/lib/podvisor', info), [
    '/var/lib/podvisor/containerd/state/io.containerd.grpc.v1.cri/sandboxes/abc/shm',
    '/var/lib/podvisor/with space',
    '/var/lib/podvisor',
  ]);
});

test('the pause image: an x86-64 ELF executable in a docker save archive named localhost/podvisor/pause:1', () => {
  const elf = pauseExecutable();
  assert.deepEqual([...elf.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);
  assert.equal(elf.readUInt16LE(18), 0x3e);
  assert.equal(Number(elf.readBigUInt64LE(24)), 0x400000 + 64 + 56);
  const archive = pauseImageArchive();
  assert.equal(archive.length % 512, 0);
  const files = new Map<string, string>();
  for (let off = 0; off + 512 <= archive.length;) {
    const name = archive.toString('ascii', off, off + 100).replace(/\0.*$/s, '');
    if (!name) break;
    const size = parseInt(archive.toString('ascii', off + 124, off + 135), 8);
    files.set(name, archive.toString('utf8', off + 512, off + 512 + size));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  assert.equal(files.size, 3);
  const manifest = JSON.parse(files.get('manifest.json')!) as Array<{ Config: string; RepoTags: string[]; Layers: string[] }>;
  assert.ok(files.has(manifest[0]!.Config) && files.has(manifest[0]!.Layers[0]!));
  assert.deepEqual(manifest[0]!.RepoTags, [LOCAL_PAUSE_IMAGE]);
});

test('the config for a normal user: the probed snapshotter, cgroups and AppArmor left alone, no negative OOM scores', () => {
  const layout = managedContainerdLayout('/home/dev/.podvisor');
  const text = managedContainerdConfig(layout, {
    sandboxImage: 'pause:local',
    cniBinDir: '/usr/lib/cni',
    restrictOOMScoreAdj: false,
    rootless: { snapshotter: 'native', cgroupDelegated: false },
  });
  for (const line of ['  restrict_oom_score_adj = true', '  disable_cgroup = true', '  disable_apparmor = true', '    snapshotter = "native"'])
    assert.ok(text.split('\n').includes(line), `${line}\n${text}`);
  assert.doesNotMatch(text, /proxy_plugins/);
  const delegated = managedContainerdConfig(layout, {
    sandboxImage: 'pause:local',
    cniBinDir: '/usr/lib/cni',
    restrictOOMScoreAdj: false,
    rootless: { snapshotter: 'fuse-overlayfs', cgroupDelegated: true, fuseOverlayfsSocket: '/home/dev/.podvisor/containerd/fuse-overlayfs.sock' },
  });
  assert.match(delegated, /\n {2}disable_cgroup = false\n/);
  assert.match(
    delegated,
    /\[proxy_plugins\]\n {2}\[proxy_plugins\."fuse-overlayfs"\]\n {4}type = "snapshot"\n {4}address = "\/home\/dev\/\.podvisor\/containerd\/fuse-overlayfs\.sock"/,
  );
  // As root nothing of this is written.
  assert.doesNotMatch(managedContainerdConfig(layout, { sandboxImage: 'p', cniBinDir: '/c', restrictOOMScoreAdj: false }), /disable_cgroup|snapshotter =/);
});
