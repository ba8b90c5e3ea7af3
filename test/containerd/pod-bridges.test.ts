// Two containerd-mode agents on one host, each with its own root dir and so its own CNI bridge and
// /24: the host reaches the pods of both; a bridge left behind without pods, on the range of one
// of them, is cleared at its start; an agent stopped with no pod left removes its bridge, one killed
// with its pods running keeps it, and the next start reaches the same pods again.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { bridgeName, defaultPodCIDR } from '../../src/runtime/cni-config.js';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { skipReason, startContainerd, type ContainerdEnv } from './harness.js';

const run = promisify(execFile);
const skip = await skipReason();

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

const bridgeExists = (name: string) => existsSync(join('/sys/class/net', name));

/** The IP of the running sandbox of pod `web` in a containerd. */
async function webIP(client: CriRuntimeClient): Promise<string | undefined> {
  const ready = (await client.listPodSandbox()).filter((s) => s.state === 'SANDBOX_READY' && s.metadata.name === 'web');
  if (ready.length !== 1) return undefined;
  return (await client.podSandboxStatus(ready[0]!.id)).network?.ip || undefined;
}

test('two agents on one host: a bridge and a /24 each, stale bridges cleared, the bridge removed with the last pod', { skip, timeout: 300_000 }, async () => {
  const tmp = await tempDir('podvisor-bridges-');
  // Two root dirs whose default ranges differ (each a /24 of 10.85.0.0/16 picked by its path).
  const roots = [join(tmp.path, 'a')];
  for (let i = 0; roots.length < 2; i++) {
    const r = join(tmp.path, `b${i}`);
    if (defaultPodCIDR(r) !== defaultPodCIDR(roots[0]!)) roots.push(r);
  }
  const envs: ContainerdEnv[] = [];
  const clients: CriRuntimeClient[] = [];
  const ups: CliProcess[] = [];
  const stale = 'podvisorstale';
  try {
    for (let i = 0; i < 2; i++) envs.push(await startContainerd());
    for (const e of envs) clients.push(new CriRuntimeClient({ endpoint: e.endpoint, logger: silentLogger }));
    // A bridge left by an agent that is gone, on the range agent a is about to use.
    await run('ip', ['link', 'del', stale]).catch(() => {});
    await run('ip', ['link', 'add', stale, 'type', 'bridge']);
    await run('ip', ['addr', 'add', defaultPodCIDR(roots[0]!).replace(/0\/24$/, '1/24'), 'dev', stale]);
    await run('ip', ['link', 'set', stale, 'up']);

    const args = (i: number) => {
      const file = join(tmp.path, `web-${i}.yaml`);
      writeFileSync(
        file,
        `apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: httpd\n    image: ${envs[i]!.images.web}\n    readinessProbe: {httpGet: {path: /index.html, port: 8080}, periodSeconds: 1}\n`,
      );
      return [
        'up',
        '-f',
        file,
        '--runtime=containerd',
        `--container-runtime-endpoint=${envs[i]!.endpoint}`,
        `--cni-conf-dir=${envs[i]!.cniConfDir}`,
        '--root-dir',
        roots[i]!,
      ];
    };
    const ready = (up: CliProcess) => /^pod\/web: Running, ready 1\/1/m.test(up.stderr());
    for (let i = 0; i < 2; i++) ups.push(startCli(args(i)));
    for (const up of ups) await waitFor(`web ready:\n${up.stderr()}`, () => ready(up), 120_000);

    assert.ok(!bridgeExists(stale), 'the stale bridge on agent a’s range was removed');
    const ips: string[] = [];
    for (let i = 0; i < 2; i++) {
      assert.ok(bridgeExists(bridgeName(roots[i]!)), `agent ${i} has its own bridge`);
      const ip = (await webIP(clients[i]!))!;
      const prefix = defaultPodCIDR(roots[i]!).replace(/0\/24$/, '');
      assert.ok(ip?.startsWith(prefix), `pod ${i} IP ${ip} in ${defaultPodCIDR(roots[i]!)}`);
      ips.push(ip);
    }
    for (const ip of ips) await waitFor(`the host reaches ${ip}`, async () => (await httpStatus(`http://${ip}:8080/index.html`)) === 200, 30_000);

    // Agent a killed: its pod keeps running and so does its bridge; the next start reaches it again.
    ups[0]!.child.kill('SIGKILL');
    await ups[0]!.exited;
    assert.ok(bridgeExists(bridgeName(roots[0]!)), 'a bridge with a pod on it stays');
    ups[0] = startCli(args(0));
    await waitFor(`web ready again:\n${ups[0].stderr()}`, () => ready(ups[0]!), 120_000);
    assert.equal(await webIP(clients[0]!), ips[0], 'the same pod, adopted');
    assert.equal(await httpStatus(`http://${ips[0]}:8080/index.html`), 200);

    // Both stopped: their pods go, and with them their bridges.
    for (const up of ups) {
      up.child.kill('SIGTERM');
      const exit = await up.exited;
      assert.equal(exit.code, 0, up.stderr());
    }
    for (const r of roots) assert.ok(!bridgeExists(bridgeName(r)), `${bridgeName(r)} removed with its last pod`);
  } finally {
    for (const up of ups) up.child.kill('SIGKILL');
    for (const c of clients) await c.close();
    for (const e of envs) await e.stop();
    for (const b of [stale, ...roots.map(bridgeName)]) await run('ip', ['link', 'del', b]).catch(() => {});
    await tmp.remove();
  }
});
