// The pure parts of running pods on a CRI runtime with images: image names and pull credentials,
// the kubelet's resource formulas, DNS from resolv.conf, the pod network config, termination message cuts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyDefaultImageTag, credentialsFor, parseImageName, shouldPullImage } from '../../src/kuberuntime/images.js';
import { linuxContainerResources, milliCPUToQuota, milliCPUToShares, parseResolvConf, podDNSConfig } from '../../src/kuberuntime/linux-config.js';
import { truncateForPod } from '../../src/kuberuntime/termination-message.js';
import { bridgeName, checkPodCIDR, podNetworkConfList } from '../../src/runtime/cni-config.js';
import { preparePodNetwork } from '../../src/agent/pod-network.js';
import { silentLogger } from '../../src/util/logger.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { humanSize } from '../../src/cli/images.js';
import { makePod } from './harness.js';

test('image names: the :latest default, registries, invalid names', () => {
  assert.equal(applyDefaultImageTag('busybox'), 'busybox:latest');
  assert.equal(applyDefaultImageTag('127.0.0.1:5000/a/b'), '127.0.0.1:5000/a/b:latest');
  assert.equal(applyDefaultImageTag('a/b:v1'), 'a/b:v1');
  assert.equal(applyDefaultImageTag(`a@sha256:${'0'.repeat(64)}`), `a@sha256:${'0'.repeat(64)}`);
  assert.deepEqual(parseImageName('nginx'), { domain: 'docker.io', path: 'library/nginx', tag: 'latest', digest: '' });
  assert.equal(parseImageName('localhost/x:1').domain, 'localhost');
  assert.throws(() => applyDefaultImageTag('Not/A..Valid'), /couldn't parse image name "Not\/A\.\.Valid": invalid reference format/);
  assert.equal(shouldPullImage('Never', false), false);
  assert.equal(shouldPullImage('IfNotPresent', true), false);
  assert.equal(shouldPullImage('Always', true), true);
});

test('pull credentials from dockerconfigjson match the registry and path, most specific first', () => {
  const secret = (auths: object) => ({
    apiVersion: 'v1' as const,
    kind: 'Secret' as const,
    metadata: { name: 's' },
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
  });
  const s = secret({
    'https://index.docker.io/v1/': { auth: Buffer.from('hub:pw').toString('base64') },
    'reg.example:5000': { username: 'u1', password: 'p1' },
    'reg.example:5000/team': { username: 'u2', password: 'p2' },
  });
  assert.deepEqual(credentialsFor('busybox', [s]), [{ username: 'hub', password: 'pw' }]);
  assert.deepEqual(
    credentialsFor('reg.example:5000/team/app:1', [s]).map((a) => a.username),
    ['u2', 'u1'],
  );
  assert.deepEqual(
    credentialsFor('reg.example:5000/other/app', [s]).map((a) => a.username),
    ['u1'],
  );
  assert.deepEqual(credentialsFor('elsewhere.io/app', [s]), []);
});

test("the kubelet's CPU shares and quota, memory limit and OOM score", () => {
  assert.equal(milliCPUToShares(0), 2);
  assert.equal(milliCPUToShares(250), 256);
  assert.equal(milliCPUToQuota(500, 100_000), 50_000);
  assert.equal(milliCPUToQuota(1, 100_000), 1000);
  const guaranteed = makePod('g', [
    { name: 'a', image: 'x', resources: { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '500m', memory: '64Mi' } } },
  ]);
  assert.deepEqual(linuxContainerResources(guaranteed, guaranteed.spec!.containers[0]!, 1 << 30), {
    cpuPeriod: 100_000,
    cpuQuota: 50_000,
    cpuShares: 512,
    memoryLimitInBytes: 64 * 1024 * 1024,
    oomScoreAdj: -997,
  });
  const best = makePod('b', [{ name: 'a', image: 'x' }]);
  assert.deepEqual(linuxContainerResources(best, best.spec!.containers[0]!, 1 << 30), {
    cpuPeriod: 0,
    cpuQuota: 0,
    cpuShares: 2,
    memoryLimitInBytes: 0,
    oomScoreAdj: 1000,
  });
});

test('DNS from the host resolv.conf, dnsConfig appended, None alone', () => {
  const host = 'nameserver 10.0.0.1\nsearch a.example b.example\noptions ndots:2\n# comment\nnameserver 10.0.0.2\n';
  assert.deepEqual(parseResolvConf(host), { servers: ['10.0.0.1', '10.0.0.2'], searches: ['a.example', 'b.example'], options: ['ndots:2'] });
  const pod = makePod('d', [{ name: 'a', image: 'x' }], { dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'ndots', value: '5' }] } });
  const got = podDNSConfig(pod, host);
  assert.equal(got.missingClusterDNS, true);
  assert.deepEqual(got.config, { servers: ['10.0.0.1', '10.0.0.2', '1.1.1.1'], searches: ['a.example', 'b.example'], options: ['ndots:5'] });
  const none = makePod('n', [{ name: 'a', image: 'x' }], { dnsPolicy: 'None', dnsConfig: { nameservers: ['9.9.9.9'] } });
  assert.deepEqual(podDNSConfig(none, host), { config: { servers: ['9.9.9.9'], searches: [], options: [] }, missingClusterDNS: false });
});

test('pod network config, CIDR checks, message cuts, sizes', () => {
  const conf = podNetworkConfList({ podCIDR: '10.85.0.0/16' }) as { plugins: Array<{ type: string; ipam?: { ranges: unknown } }> };
  assert.deepEqual(
    conf.plugins.map((p) => p.type),
    ['bridge', 'portmap'],
  );
  assert.deepEqual(conf.plugins[0]!.ipam!.ranges, [[{ subnet: '10.85.0.0/16' }]]);
  assert.equal(checkPodCIDR('10.85.0.0/16'), undefined);
  assert.match(checkPodCIDR('10.300.0.0/16')!, /invalid CIDR/);
  assert.equal(truncateForPod('x'.repeat(5000), 3).length, 4096);
  assert.equal(truncateForPod('x'.repeat(5000), 1).length, 5000);
  assert.equal(humanSize(1088855), '1.089MB');
});

test('pod network: each root dir gets its own bridge, a valid interface name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-net-'));
  try {
    const bridges: string[] = [];
    for (const root of ['a', 'b']) {
      const cniConfDir = join(dir, root, 'net.d');
      const settings = {
        runtime: 'containerd',
        rootDir: join(dir, root),
        runtimeEndpoint: '',
        node: { cpuMilli: 1000, memoryBytes: 1e9 },
        cniConfDir,
        podCIDR: '10.86.0.0/16',
      };
      await preparePodNetwork(settings, silentLogger);
      const conf = JSON.parse(readFileSync(join(cniConfDir, '10-podvisor.conflist'), 'utf8')) as { plugins: Array<{ bridge?: string }> };
      bridges.push(conf.plugins[0]!.bridge!);
    }
    assert.notEqual(bridges[0], bridges[1]);
    for (const b of bridges) assert.match(b, /^podvisor[0-9a-f]{7}$/);
    assert.equal(bridgeName(join(dir, 'a')), bridges[0], 'stable for a root dir');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
