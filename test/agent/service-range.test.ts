// Two agents on one host, through the built CLI: each root dir gets a service range (and cluster DNS
// address) of its own, recorded in `<root>/service-network.json` and kept across restarts, so a
// request to one agent's ClusterIP reaches that agent's pod, never the other's; a range that overlaps
// another root dir's, and a DNS address another process holds, are refusals naming the flag.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, container } from '../fixtures/pods.js';
import { waitFor } from '../fixtures/wait.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function httpText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

/** A pod answering HTTP with its name on a free host port, and a ClusterIP Service in front of it. */
async function podAndService(dir: string, name: string): Promise<string> {
  const port = await freePort();
  const server = `require('http').createServer((q, r) => r.end(${JSON.stringify(name)})).listen(${port}, '127.0.0.1')`;
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      manifestYaml(pod(name, [container('web', [process.execPath, '-e', server])], { terminationGracePeriodSeconds: 1 }, { labels: { app: name } })),
      manifestYaml({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 18080, targetPort: port }] } }),
    ].join('---\n'),
  );
  return file;
}

interface Recorded {
  serviceClusterIPRange: string;
  clusterDNS: string;
}

const recorded = (root: string) => JSON.parse(readFileSync(join(root, 'service-network.json'), 'utf8')) as Recorded;

async function clusterIP(root: string, name: string): Promise<string> {
  const r = await runCli(['get', 'svc', name, '-o', 'jsonpath={.spec.clusterIP}', '--root-dir', root]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

test('two agents on one host: a service range and DNS address of its own per root dir, recorded and kept; each ClusterIP reaches its own pod', async () => {
  const tmp = await tempDir();
  const roots = { a: join(tmp.path, 'a'), b: join(tmp.path, 'b') };
  try {
    const files = { a: await podAndService(tmp.path, 'alpha'), b: await podAndService(tmp.path, 'beta') };
    for (const k of ['a', 'b'] as const) {
      const up = await runCli(['up', '-d', '-f', files[k], '--root-dir', roots[k], '--wait=running']);
      assert.equal(up.code, 0, up.stderr);
    }
    const [ra, rb] = [recorded(roots.a), recorded(roots.b)];
    assert.notEqual(ra.serviceClusterIPRange, rb.serviceClusterIPRange);
    assert.notEqual(ra.clusterDNS, rb.clusterDNS);
    for (const r of [ra, rb]) assert.equal(r.clusterDNS, r.serviceClusterIPRange.replace(/\.0\/\d+$/, '.10'));

    const [ipa, ipb] = [await clusterIP(roots.a, 'alpha'), await clusterIP(roots.b, 'beta')];
    assert.notEqual(ipa, ipb);
    assert.ok(ipb.startsWith(rb.serviceClusterIPRange.split('.').slice(0, 2).join('.') + '.'), `${ipb} in ${rb.serviceClusterIPRange}`);
    assert.equal(await waitFor(`alpha through ${ipa}`, () => httpText(`http://${ipa}:18080/`).catch(() => '')), 'alpha');
    assert.equal(await waitFor(`beta through ${ipb}`, () => httpText(`http://${ipb}:18080/`).catch(() => '')), 'beta');

    const status = await runCli(['agent', 'status', '-o', 'json', '--root-dir', roots.b]);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual((JSON.parse(status.stdout) as { serviceNetwork?: Recorded }).serviceNetwork, rb);
    const text = await runCli(['agent', 'status', '--root-dir', roots.b]);
    assert.ok(text.stdout.includes(`services:  ${rb.serviceClusterIPRange}, cluster DNS ${rb.clusterDNS}:53\n`), text.stdout);

    // A restart keeps the root dir's range, and the Service its ClusterIP.
    assert.equal((await runCli(['agent', 'stop', '--root-dir', roots.b])).code, 0);
    const again = await runCli(['up', '-d', '-f', files.b, '--root-dir', roots.b, '--wait=running']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(recorded(roots.b), rb);
    assert.equal(await clusterIP(roots.b, 'beta'), ipb);

    // Another root dir given alpha's range is refused before it serves, naming the flag.
    const clash = await runCli(['agent', '--root-dir', join(tmp.path, 'c'), `--service-cluster-ip-range=${ra.serviceClusterIPRange}`]);
    assert.equal(clash.code, 1, clash.stderr);
    assert.match(
      clash.stderr,
      new RegExp(
        `error: the service range ${ra.serviceClusterIPRange.replace(/\./g, '\\.')} \\(--service-cluster-ip-range\\) overlaps .* of root dir ${roots.a}`,
      ),
    );
  } finally {
    for (const root of Object.values(roots)) await runCli(['down', '--all', '--agent', '--root-dir', root, '--grace-period', '0']);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});

test('a cluster DNS address another process holds: the agent refuses to start, naming --service-cluster-ip-range', async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('binding port 53 needs root');
    return;
  }
  const tmp = await tempDir();
  // A range no root dir has (a /24 of the default /16s' far end), its DNS address held by this test.
  const range = '127.253.77.0/24';
  const squatter = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    squatter.once('error', reject);
    squatter.bind({ address: '127.253.77.10', port: 53, exclusive: true }, () => resolve());
  });
  try {
    const r = await runCli(['agent', '--root-dir', join(tmp.path, 'root'), `--service-cluster-ip-range=${range}`]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /error: the cluster DNS cannot listen on 127\.253\.77\.10:53: EADDRINUSE; .*--service-cluster-ip-range/);
    assert.doesNotMatch(r.stderr, /podvisor agent started/);
  } finally {
    squatter.close();
    await runCli(['agent', 'stop', '--root-dir', join(tmp.path, 'root')]);
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
