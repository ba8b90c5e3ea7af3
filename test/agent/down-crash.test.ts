// The agent killed (SIGKILL) while `podvisor down --all` deletes its pods, at a random point of the
// deletions: `down` says so in one line (no stack trace), a pod whose deletion began never comes back
// after the restart (nor are its containers started again), the others are taken over as they were,
// and the next `down --all` leaves no process.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { runCli, startCli, stopRuntimeServices, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { prng } from '../fixtures/prng.js';
import { waitFor } from '../fixtures/wait.js';
import { call } from './helpers.js';

/** Agent kills and pods per kill: each kill lands among several deletions in flight. */
const ITERATIONS = 3;
const PODS = 8;

const sock = (root: string) => join(root, 'podvisor.sock');

async function startAgent(root: string): Promise<CliProcess> {
  const p = startCli(['agent', '--root-dir', root]);
  await p.waitFor('stderr', /podvisor agent started/, 60_000);
  return p;
}

async function pods(root: string): Promise<Pod[]> {
  return (await call(sock(root), 'GET', '/api/v1/pods')).json().items;
}

/** Live processes whose command line holds the marker, without a shell's fork of the same line. */
function processesWith(marker: string): number[] {
  const found = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(marker)) continue;
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      found.set(Number(d), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

/** A pod whose container ignores SIGTERM, so each deletion takes its whole grace period. */
function stubbornPod(name: string, marker: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 3,
      containers: [{ name: 'main', image: 'busybox', command: ['/bin/sh', '-c', "trap '' TERM; while :; do sleep 0.2; done", marker] }],
    },
  } as Pod;
}

test(`agent killed during down --all (${ITERATIONS} times, ${PODS} pods): deleted pods stay deleted, no duplicate, no survivor`, async () => {
  const random = prng(Number(process.env.PODVISOR_CRASH_SEED ?? 20261204));
  const findings: string[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const dir = await tempDir('podvisor-downcrash-');
    const root = join(dir.path, 'root');
    const tag = `pvd${process.pid}x${i}`;
    const markerOf = (name: string) => `${tag}-${name}`;
    const names = Array.from({ length: PODS }, (_, n) => `p${n}`);
    let agent = await startAgent(root);
    try {
      for (const name of names) {
        const r = await call(sock(root), 'POST', '/api/v1/namespaces/default/pods', stubbornPod(name, markerOf(name)));
        assert.equal(r.status, 201, r.body);
      }
      const before = await waitFor(
        `${PODS} pods running`,
        async () => {
          const items = await pods(root);
          return items.length === PODS && items.every((p) => p.status?.containerStatuses?.[0]?.state?.running) && items;
        },
        90_000,
      );
      const containerOf = new Map(before.map((p) => [p.metadata!.name!, p.status!.containerStatuses![0]!.containerID]));

      const down = startCli(['down', '--all', '--root-dir', root]);
      const deletedBeforeKill = 1 + Math.floor(random() * (PODS - 1));
      const deleting = await waitFor(`${deletedBeforeKill} deletions begun`, async () => {
        const marked = (await pods(root)).filter((p) => p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!);
        return marked.length >= deletedBeforeKill && marked;
      });
      agent.child.kill('SIGKILL');
      await agent.exited;
      const downDone = await down.exited;
      if (downDone.code === 0 || /\n\s+at /.test(down.stderr()) || !/^error: /m.test(down.stderr())) {
        findings.push(`kill ${i}: down exited ${downDone.code} with ${JSON.stringify(down.stderr())}`);
      }

      agent = await startAgent(root);
      const after = await pods(root);
      for (const p of after) {
        const name = p.metadata!.name!;
        if (deleting.includes(name)) findings.push(`kill ${i}: pod ${name}, deleted before the kill, came back`);
        const st = p.status?.containerStatuses?.[0];
        if (st && (st.restartCount !== 0 || (st.containerID && st.containerID !== containerOf.get(name)))) {
          findings.push(`kill ${i}: pod ${name} was started again (restartCount ${st.restartCount}, container ${st.containerID})`);
        }
      }
      const kept = new Set(after.map((p) => p.metadata!.name!));
      const settled = await waitFor(
        'one process per pod kept, none for a pod gone',
        () => names.every((n) => processesWith(markerOf(n)).length === (kept.has(n) ? 1 : 0)),
        20_000,
      ).then(
        () => true,
        () => false,
      );
      if (!settled) {
        const counts = names.map((n) => `${n}:${processesWith(markerOf(n)).length}${kept.has(n) ? '' : '(gone)'}`);
        findings.push(`kill ${i}: processes per pod after the restart ${counts.join(' ')}`);
      }
      const again = await runCli(['down', '--all', '--grace-period', '0', '--root-dir', root]);
      assert.equal(again.code, 0, again.stderr);
      const survivors = names.flatMap((n) => processesWith(markerOf(n)));
      if (survivors.length > 0) findings.push(`kill ${i}: ${survivors.length} processes survive the second down --all`);
    } finally {
      agent.child.kill('SIGKILL');
      await agent.exited;
      await stopRuntimeServices(dir.path);
      for (const n of names) for (const p of processesWith(markerOf(n))) process.kill(p, 'SIGKILL');
      await dir.remove();
    }
  }
  assert.deepEqual(findings, []);
});
