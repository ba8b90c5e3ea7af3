// The runtime service killed (SIGKILL) at random instants of a start storm, many times over: after
// each restart every process it spawned is a container it reports running (none left in a state
// the kubelet would start again: a duplicate), and removing the pod leaves no process behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { silentLogger } from '../../src/util/logger.js';
import { prng } from '../fixtures/prng.js';
import { containerConfig, sandboxConfig, tempDir, waitFor } from './helpers.js';

const mainJs = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));

/** Iterations and containers per storm: a race hit one time in five is missed by all 12 with p < 0.07; each storm has 8 chances. */
const ITERATIONS = 12;
const CONTAINERS = 8;

interface Service {
  child: ChildProcess;
  exited: Promise<unknown>;
}

function startService(root: string): Service {
  const child = spawn(process.execPath, [mainJs, 'runtime', 'serve', '--root-dir', root], { stdio: 'ignore', detached: true });
  return { child, exited: new Promise((r) => child.once('exit', r)) };
}

async function connected(root: string): Promise<CriRuntimeClient> {
  const client = new CriRuntimeClient({ endpoint: `unix://${join(root, 'runtime.sock')}`, logger: silentLogger });
  await waitFor('the runtime service answers', () =>
    client.version().then(
      () => true,
      () => false,
    ),
  );
  return client;
}

/** The pids of live processes whose working directory is under dir (the containers of this test's root). */
function processesUnder(dir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readlinkSync(`/proc/${name}/cwd`).startsWith(dir)) continue;
      out.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

function killAll(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

test(`runtime service killed at random instants of a start storm (${ITERATIONS} storms of ${CONTAINERS}): no duplicate, no survivor`, async () => {
  const random = prng(Number(process.env.PODVISOR_CRASH_SEED ?? 20261204));
  const findings: string[] = [];
  const { dir: root, cleanup } = tempDir('podvisor-crash-');
  // The service restarted after one storm serves the next.
  let svc = startService(root);
  let client = await connected(root);
  try {
    for (let i = 0; i < ITERATIONS; i++) {
      const sbc = sandboxConfig(root, `storm-${i}`);
      const sb = await client.runPodSandbox(sbc);
      const ids: string[] = [];
      for (let n = 0; n < CONTAINERS; n++) {
        ids.push(await client.createContainer(sb, containerConfig(['sh', '-c', 'exec sleep 300'], { metadata: { name: `c${n}`, attempt: 0 } }), sbc));
      }
      // The kill lands once a random number of the processes exist: some spawned, some not yet.
      const startedBeforeKill = Math.floor(random() * CONTAINERS);
      const starts = ids.map((id) => client.startContainer(id).catch(() => undefined));
      await waitFor(`${startedBeforeKill} containers spawned`, () => processesUnder(root).length >= startedBeforeKill);
      svc.child.kill('SIGKILL');
      await svc.exited;
      await Promise.all(starts);
      await client.close();

      svc = startService(root);
      client = await connected(root);
      const running = (await client.listContainers({ podSandboxId: sb })).filter((c) => c.state === 'CONTAINER_RUNNING');
      const processes = processesUnder(root);
      if (processes.length !== running.length) {
        findings.push(
          `storm ${i}: ${processes.length} processes run, the restarted service reports ${running.length} running (the rest would be started again)`,
        );
      }
      await client.removePodSandbox(sb);
      const survivors = await waitFor('the removed pod leaves no process', () => processesUnder(root).length === 0, 3_000).then(
        () => [],
        () => processesUnder(root),
      );
      if (survivors.length > 0) findings.push(`storm ${i}: ${survivors.length} processes survive the pod's removal`);
      killAll(survivors);
    }
  } finally {
    killAll(processesUnder(root));
    await client.close();
    svc.child.kill('SIGKILL');
    await svc.exited;
    cleanup();
  }
  assert.deepEqual(findings, []);
});
