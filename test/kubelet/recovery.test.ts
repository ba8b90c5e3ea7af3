// Agent restart with the runtime kept (PodKubelet.recover + PodWorker.adoptSandbox): a new kubelet,
// over the CRI to the same runtime, takes back the pods it is given — running containers kept (same
// ids, same processes, restart counts and lastState from the runtime's instances), a changed spec
// restarted — and terminates the pods it is no longer given.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Pod } from '../../src/api/types.js';
import { PodKubelet } from '../../src/kubelet/kubelet.js';
import { connectCriRuntime, type CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { serveCri } from '../../src/runtime/cri/server.js';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { makePod, sh, waitFor } from './harness.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

test('a restarted kubelet adopts the pods it is given and terminates the others', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-recover-'));
  const clock = new RealClock();
  const runtime = new ProcessRuntime({ rootDir: dir, clock, logger: silentLogger });
  const server = await serveCri(runtime, { endpoint: `unix://${join(dir, 'runtime.sock')}`, logger: silentLogger });
  const kubeletOn = (client: CriRuntimeClient) =>
    new PodKubelet({
      runtime: client,
      clock,
      logger: silentLogger,
      rootDir: dir,
      nodeName: 'test-node',
      lookup: { configMap: () => undefined, secret: () => undefined },
    });
  let client = await connectCriRuntime({ endpoint: server.endpoint, logger: silentLogger });
  let kubelet = kubeletOn(client);
  const pidOf = (name: string) => Number(readFileSync(join(dir, `${name}.pid`), 'utf8'));
  try {
    const keep = makePod('keep', [
      sh('app', `echo $$$$ > ${dir}/keep.pid; i=0; while :; do i=$((i+1)); echo "n $i"; sleep 0.05; done`, {
        readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
      }),
    ]);
    const crashy = makePod('crashy', [sh('crash', 'sleep 0.2; exit 3')]);
    const gone = makePod('gone', [sh('app', `echo $$$$ > ${dir}/gone.pid; exec sleep 300`)]);
    const changed = makePod('changed', [sh('app', `echo $$$$ > ${dir}/changed.pid; exec sleep 300`)]);
    for (const p of [keep, crashy, gone, changed]) kubelet.startPod(p);
    const cs = (k: PodKubelet, p: Pod, name = 'app') => k.getPodStatus(p.metadata!.uid!)?.containerStatuses?.find((c) => c.name === name);
    await waitFor('pods running', () => cs(kubelet, keep)?.ready && cs(kubelet, gone)?.state?.running && cs(kubelet, changed)?.state?.running);
    await waitFor('crashy restarted once', () => (cs(kubelet, crashy, 'crash')?.restartCount ?? 0) >= 1 && cs(kubelet, crashy, 'crash')?.lastState?.terminated);
    const before = {
      keepId: cs(kubelet, keep)!.containerID,
      keepPid: pidOf('keep'),
      crashRestarts: cs(kubelet, crashy, 'crash')!.restartCount,
      goneId: cs(kubelet, gone)!.containerID,
      goneSandboxes: await client.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': gone.metadata!.uid! } }),
      changedPid: pidOf('changed'),
    };

    // The agent dies: its kubelet goes away without stopping anything; the runtime keeps the pods.
    await kubelet.close();
    assert.ok(isAlive(before.keepPid), 'containers keep running without the agent');

    client = await connectCriRuntime({ endpoint: server.endpoint, logger: silentLogger });
    kubelet = kubeletOn(client);
    const changedSpec: Pod = structuredClone(changed);
    changedSpec.spec!.containers[0]!.command = ['sh', '-c', `echo $$$$ > ${dir}/changed.pid; exec sleep 301`];
    const given = [keep, crashy, changedSpec];
    const r = await kubelet.recover(given);
    assert.deepEqual([r.adopted, r.terminated], [3, 1]);
    for (const p of given) kubelet.startPod(p);

    await waitFor('keep reported running again', () => cs(kubelet, keep)?.state?.running);
    assert.equal(cs(kubelet, keep)!.containerID, before.keepId, 'the same container, not a new one');
    assert.equal(cs(kubelet, keep)!.restartCount, 0);
    assert.equal(pidOf('keep'), before.keepPid, 'no second process was started');
    assert.ok(isAlive(before.keepPid));
    await waitFor('readiness probing resumed', () => cs(kubelet, keep)?.ready);
    await waitFor(
      'crashy keeps its restart count and lastState',
      () => (cs(kubelet, crashy, 'crash')?.restartCount ?? 0) >= before.crashRestarts && cs(kubelet, crashy, 'crash')?.lastState?.terminated?.exitCode === 3,
    );
    // The changed spec (another hash) replaces the container.
    await waitFor('changed container restarted with its new spec', () => pidOf('changed') !== before.changedPid && isAlive(pidOf('changed')));
    await waitFor('the old instance of the changed container stopped', () => !isAlive(before.changedPid));
    // The pod no longer given is terminated and its sandbox removed.
    await waitFor(
      'gone pod terminated',
      async () => !isAlive(pidOf('gone')) && (await client.listPodSandbox({ id: before.goneSandboxes[0]!.id })).length === 0,
    );

    await kubelet.terminateAll({ gracePeriodSeconds: 0 });
    assert.ok(!isAlive(before.keepPid), 'terminating the adopted pod stops its container');
  } finally {
    await kubelet.close();
    await server.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
