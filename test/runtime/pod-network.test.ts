// The process runtime with a pod network (as root, with the CNI plugins): a sandbox in a network
// namespace of its own on the bridge, its IP in the status, containers and execs inside it, start
// errors worded as on the host's network, a hostNetwork sandbox left on the host, and the namespace,
// veth and address gone once the sandbox is removed; the host checks said plainly.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { DEFAULT_CNI_BIN_DIR, netnsName, podNetworkConfig, podNetworkHostProblems, type PodNetworkConfig } from '../../src/runtime/process/pod-netns.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, sandboxConfig, tempDir, waitFor } from './helpers.js';

/** A /24 of 172.30.0.0/16, which no default network on these hosts uses. */
const testCIDR = () => `172.30.${randomInt(1, 255)}.0/24`;

const probeConfig = podNetworkConfig('/nonexistent-root', '172.30.0.0/24');
const problems = podNetworkHostProblems(probeConfig);
const skip = problems.length ? `no pod network here: ${problems.join('; ')}` : false;

async function withNetRuntime(fn: (rt: ProcessRuntime, root: string, net: PodNetworkConfig) => Promise<void>) {
  const { dir, cleanup } = tempDir();
  const net = podNetworkConfig(dir, testCIDR());
  const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger, podNetwork: net });
  try {
    await fn(rt, dir, net);
  } finally {
    await rt.close();
    try {
      execFileSync('ip', ['link', 'delete', net.bridge], { stdio: 'ignore' });
    } catch {
      // never made
    }
    cleanup();
  }
}

const bridgePorts = (bridge: string) => (existsSync(`/sys/class/net/${bridge}/brif`) ? readdirSync(`/sys/class/net/${bridge}/brif`) : []);
const inRange = (ip: string, cidr: string) => ip.split('.').slice(0, 3).join('.') === cidr.split('.').slice(0, 3).join('.');

async function exited(rt: ProcessRuntime, id: string) {
  return waitFor('container exit', async () => {
    const s = await rt.containerStatus(id);
    return s.state === 'CONTAINER_EXITED' ? s : undefined;
  });
}

test('a sandbox gets a namespace and an IP on the bridge; its containers and execs run inside it; removal leaves nothing', { skip }, async () => {
  await withNetRuntime(async (rt, root, net) => {
    const sbc = sandboxConfig(root);
    const netnsDirMounts = () =>
      readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .filter((l) => / \/run\/netns /.test(l)).length;
    const dirMountsBefore = netnsDirMounts();
    const sb = await rt.runPodSandbox(sbc);
    // The directory itself is not bind-mounted over (as `ip netns add` does), which would hide containerd's namespaces.
    assert.equal(netnsDirMounts(), dirMountsBefore, '/run/netns is not mounted over');
    const ip = (await rt.podSandboxStatus(sb)).network.ip;
    assert.ok(inRange(ip, net.podCIDR), `${ip} in ${net.podCIDR}`);
    assert.equal(rt.capabilities.network, 'pod');
    assert.ok(existsSync(`/var/run/netns/${netnsName(sb)}`));
    assert.equal(bridgePorts(net.bridge).length, 1, 'one veth on the bridge');

    // The container sees its own eth0 with the pod IP; the host reaches its port at that IP.
    const id = await rt.createContainer(sb, containerConfig(['python3', '-m', 'http.server', '--bind', '0.0.0.0', '8080']), sbc);
    await rt.startContainer(id);
    const body = await waitFor('the container answers on its pod IP', () =>
      fetch(`http://${ip}:8080/`).then(
        (r) => (r.ok ? r.text() : undefined),
        () => undefined,
      ),
    );
    assert.match(body, /Directory listing/);
    const ex = await rt.execSync(id, ['sh', '-c', 'ip -4 -o addr show eth0'], 10);
    assert.equal(ex.exitCode, 0, ex.stderr.toString());
    assert.match(ex.stdout.toString(), new RegExp(` ${ip.replace(/\./g, '\\.')}/24 `));
    // Inside, 127.0.0.1:8080 is the pod's own port: an exec probe sees what the container binds.
    const local = await rt.execSync(id, ['python3', '-c', 'import urllib.request;print(urllib.request.urlopen("http://127.0.0.1:8080/").status)'], 10);
    assert.equal(local.stdout.toString().trim(), '200');

    // A missing command fails with the same words as on the host's network.
    await assert.rejects(
      rt.execSync(id, ['no-such-command-xyz'], 5),
      /failed to exec in container: exec: "no-such-command-xyz": executable file not found in \$PATH/,
    );
    const bad = await rt.createContainer(sb, containerConfig(['no-such-command-xyz'], { metadata: { name: 'bad', attempt: 0 } }), sbc);
    await assert.rejects(rt.startContainer(bad), /exec: "no-such-command-xyz": executable file not found in \$PATH/);
    assert.equal((await rt.containerStatus(bad)).reason, 'StartError');

    await rt.stopPodSandbox(sb);
    assert.equal((await rt.podSandboxStatus(sb)).network.ip, ip, 'a stopped sandbox keeps its address in its status');
    assert.ok(!existsSync(`/var/run/netns/${netnsName(sb)}`), 'the namespace is removed');
    assert.deepEqual(bridgePorts(net.bridge), [], 'the veth is gone');
    await rt.removePodSandbox(sb);
    assert.ok(!existsSync(`/var/lib/cni/networks/podvisor/${ip}`), 'the address is released');
  });
});

test('two sandboxes both listen on one port, each at its own IP', { skip }, async () => {
  await withNetRuntime(async (rt, root) => {
    const ips: string[] = [];
    for (const name of ['a', 'b']) {
      const sbc = sandboxConfig(root, name);
      const sb = await rt.runPodSandbox(sbc);
      ips.push((await rt.podSandboxStatus(sb)).network.ip);
      const id = await rt.createContainer(sb, containerConfig(['sh', '-c', `echo ${name} > index.html; exec python3 -m http.server 8080`]), sbc);
      await rt.startContainer(id);
    }
    assert.notEqual(ips[0], ips[1]);
    for (const [i, ip] of ips.entries()) {
      const body = await waitFor(`pod ${i} answers`, () =>
        fetch(`http://${ip}:8080/index.html`).then(
          (r) => (r.ok ? r.text() : undefined),
          () => undefined,
        ),
      );
      assert.equal(body.trim(), ['a', 'b'][i]);
    }
  });
});

test('a hostPort reaches the pod through portmap, and its rules go with the sandbox', { skip }, async () => {
  await withNetRuntime(async (rt, root) => {
    const hostPort = randomInt(20000, 29000);
    const sbc = { ...sandboxConfig(root, 'hp'), portMappings: [{ protocol: 'TCP' as const, containerPort: 8080, hostPort, hostIp: '' }] };
    const sb = await rt.runPodSandbox(sbc);
    const id = await rt.createContainer(sb, containerConfig(['python3', '-m', 'http.server', '8080']), sbc);
    await rt.startContainer(id);
    await waitFor(`127.0.0.1:${hostPort} answers`, () =>
      fetch(`http://127.0.0.1:${hostPort}/`).then(
        (r) => r.ok,
        () => false,
      ),
    );
    const rules = () => execFileSync('iptables', ['-t', 'nat', '-S'], { encoding: 'utf8' }).includes(`--dport ${hostPort}`);
    assert.ok(rules(), 'portmap added its DNAT rule');
    await rt.removePodSandbox(sb);
    assert.ok(!rules(), 'CNI DEL removed it');
  });
});

test('a hostNetwork sandbox stays on the host network', { skip }, async () => {
  await withNetRuntime(async (rt, root) => {
    const sbc = { ...sandboxConfig(root, 'hostnet'), linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } };
    const sb = await rt.runPodSandbox(sbc);
    assert.equal((await rt.podSandboxStatus(sb)).network.ip, '127.0.0.1');
    assert.ok(!existsSync(`/var/run/netns/${netnsName(sb)}`));
    const id = await rt.createContainer(sb, containerConfig(['sh', '-c', "ip -o link | grep -qv ': lo:'"]), sbc);
    await rt.startContainer(id);
    assert.equal((await exited(rt, id)).exitCode, 0);
  });
});

test('what the host lacks is named: root, the plugins', () => {
  const p = podNetworkHostProblems({ podCIDR: '10.85.1.0/24', bridge: 'podvisorx', cniBinDir: '/nonexistent/cni' }, 1000);
  assert.match(p[0]!, /^it needs root \(podvisor runs as uid 1000\)/);
  assert.match(
    p[1]!,
    /^the CNI plugins bridge, host-local, portmap are missing from \/nonexistent\/cni \(Debian: apt-get install containernetworking-plugins\)$/,
  );
  assert.equal(DEFAULT_CNI_BIN_DIR, '/usr/lib/cni');
  assert.match(podNetworkHostProblems({ podCIDR: '10.85.1.0/33', bridge: 'b', cniBinDir: DEFAULT_CNI_BIN_DIR }, 0).join(), /prefix length/);
});
