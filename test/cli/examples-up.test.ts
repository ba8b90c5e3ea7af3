// Every example under `up --for 20s`, side by side as a user would start them: each comes up as on a
// cluster (no restart but the crashloop example's, which restarts by design; the job-like pods
// succeed), and once the time is up each pod stops within its own terminationGracePeriodSeconds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCli, tempDir } from '../fixtures/cli/cli-process.js';

const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));

interface PodItem {
  kind: string;
  metadata: { name: string };
  spec?: { terminationGracePeriodSeconds?: number; restartPolicy?: string };
  status?: { phase?: string; containerStatuses?: { name: string; restartCount: number }[]; initContainerStatuses?: { name: string; restartCount: number }[] };
}

/** Restart by design: the crashloop example shows CrashLoopBackOff. */
const restartsByDesign = new Set(['crashloop']);
/** Pods that run to completion (restartPolicy Never/OnFailure) before the time is up. */
const completes = new Set(['report-job', 'secret-consumer']);

test('every example under up --for 20s: no unexpected restart, each pod stopped within its grace', async () => {
  const tmp = await tempDir();
  const p = startCli(['up', '-f', examples, '--for', '20s', '-o', 'json', '--root-dir', join(tmp.path, 'root')]);
  // When each stderr line arrived: the stop starts at `--for=20s elapsed`, each pod's status line
  // after that says when it stopped.
  const lines: { at: number; text: string }[] = [];
  let partial = '';
  p.child.stderr!.on('data', (b: Buffer) => {
    const parts = (partial + b.toString()).split('\n');
    partial = parts.pop()!;
    const at = Date.now();
    for (const text of parts) lines.push({ at, text });
  });
  const killer = setTimeout(() => p.child.kill('SIGKILL'), 150_000);
  try {
    const { code } = await p.exited;
    assert.equal(code, 0, p.stderr());
    const list = JSON.parse(p.stdout()) as { items: PodItem[] };
    const pods = list.items.filter((i) => i.kind === 'Pod');
    assert.ok(pods.length >= 12, `every example's pod is listed (${pods.length})`);

    for (const pod of pods) {
      const name = pod.metadata.name;
      const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
      const restarts = statuses.reduce((n, s) => n + s.restartCount, 0);
      if (restartsByDesign.has(name)) assert.ok(restarts > 0, `${name} restarts by design`);
      else assert.equal(restarts, 0, `${name}: unexpected restart: ${JSON.stringify(pod.status)}`);
      if (completes.has(name)) assert.equal(pod.status?.phase, 'Succeeded', `${name} ran to completion`);
      else assert.equal(pod.status?.phase, 'Running', `${name} running when the time was up`);
    }

    const stopAt = lines.find((l) => /^--for=20s elapsed: stopping \d+ pods gracefully$/.test(l.text))?.at;
    assert.ok(stopAt !== undefined, p.stderr());
    for (const pod of pods) {
      const name = pod.metadata.name;
      if (completes.has(name)) continue;
      const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;
      const stopped = lines.find((l) => l.at >= stopAt && new RegExp(`^pod/${name}: (Completed|Error|Succeeded|Failed)\\b`).test(l.text));
      assert.ok(stopped, `${name} reported stopped:\n${p.stderr()}`);
      const seconds = (stopped.at - stopAt) / 1000;
      assert.ok(seconds < grace, `${name} took ${seconds} s to stop, its grace is ${grace} s`);
    }
    assert.match(p.stderr(), /\nall pods stopped\n/);
  } finally {
    clearTimeout(killer);
    p.child.kill('SIGKILL');
    await tmp.remove();
  }
});
