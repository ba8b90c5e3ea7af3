// What containerd under RootlessKit needs of the host, judged for a user on an injected host: each
// missing part named with its fix (packages, sysctls, the subordinate id range, /dev/net/tun).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rootlessProblems, subordinateRange, type RootlessHost } from '../../../src/runtime/containerd/rootless.js';

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
