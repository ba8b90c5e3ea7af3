// The time from a freed resource to the pending pod's start, on a real `podvisor agent --node-cpu 1`
// (process runtime): a pod holding the node's CPU (1 CPU requested) runs, a second pod of 500m is left
// Pending as Unschedulable (Insufficient cpu), then the holder is deleted. A watch on the agent's
// socket times each step: the holder's end (the resource freed), the pending pod's binding
// (spec.nodeName: the scheduler's wait, its back-off included) and its Running phase (the start).
// Two cases: the holder deleted at once after the pending pod's failed attempt (its 1 s back-off still
// runs), and deleted once the back-off has expired (the event alone moves it to activeQ).

import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { AgentProcess, socketGet, teardownAgent } from '../lib/agent-process.js';
import { preciseNow } from '../lib/stats.js';
import type { ScenarioContext } from './types.js';
import { sleep } from './types.js';

const PODS = '/api/v1/namespaces/default/pods';

const pod = (name: string, cpu: string): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { bench: 'scheduler' } },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox', command: ['sleep', '600'], resources: { requests: { cpu } } }] },
  }) as Pod;

/** When each pod of the namespace was first seen in a state, by the watch's arrival time. */
class PodWatch {
  private readonly seen = new Map<string, number>();
  private readonly waiters: Array<{ key: string; done: (t: number) => void }> = [];
  private req?: ReturnType<typeof request>;

  open(socketPath: string, resourceVersion: string): Promise<void> {
    return new Promise((resolve, reject) => {
      let buf = '';
      this.req = request({ socketPath, path: `${PODS}?watch=1&resourceVersion=${resourceVersion}`, agent: false }, (res) => {
        res.setEncoding('utf8');
        resolve();
        res.on('data', (chunk: string) => {
          const now = preciseNow();
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim()) this.observe(JSON.parse(line) as { type: string; object: Pod }, now);
          }
        });
      });
      this.req.on('error', reject);
      this.req.end();
    });
  }

  private mark(key: string, t: number): void {
    if (this.seen.has(key)) return;
    this.seen.set(key, t);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.key === key) this.waiters.splice(i, 1)[0]!.done(t);
    }
  }

  private observe(ev: { type: string; object: Pod }, t: number): void {
    const p = ev.object;
    const name = p.metadata?.name ?? '';
    const phase = p.status?.phase;
    if (ev.type === 'DELETED' || phase === 'Succeeded' || phase === 'Failed') this.mark(`${name}/ended`, t);
    if (p.spec?.nodeName) this.mark(`${name}/bound`, t);
    if (phase === 'Running') this.mark(`${name}/running`, t);
    const sched = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (sched?.status === 'False' && sched.reason === 'Unschedulable') this.mark(`${name}/unschedulable`, t);
  }

  /** When the pod reached the state (at once if it already has). */
  when(name: string, state: 'ended' | 'bound' | 'running' | 'unschedulable', timeoutMs = 60_000): Promise<number> {
    const key = `${name}/${state}`;
    const t = this.seen.get(key);
    if (t !== undefined) return Promise.resolve(t);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${key} not seen within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        key,
        done: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
      });
    });
  }

  close(): void {
    this.req?.destroy();
  }
}

export interface FreedTrial {
  /** The pending pod's back-off still running when the holder was deleted. */
  backoffRunning: boolean;
  /** ms from the delete request to the holder's end (its graceful termination). */
  terminateMs: number;
  /** ms from the holder's end to the pending pod's binding: the scheduler's wait, back-off included. */
  scheduleMs: number;
  /** ms of back-off left at the holder's end (the pod's last attempt + 1 s − the end), 0 when expired. */
  backoffLeftMs: number;
  /** ms from the binding to Running: the kubelet's admission and start. */
  startMs: number;
  /** ms from the holder's end to the pending pod Running. */
  freedToRunningMs: number;
}

async function must(r: Promise<{ status: number; body: string }>, what: string): Promise<string> {
  const res = await r;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.body.slice(0, 300)}`);
  return res.body;
}

/** Runs `trials` rounds of each case on one agent. */
export async function measureFreedResource(ctx: ScenarioContext, trials: number): Promise<FreedTrial[]> {
  const rootDir = mkdtempSync(join(tmpdir(), 'podvisor-bench-sched-'));
  ctx.defer(() => rmSync(rootDir, { recursive: true, force: true }));
  const agent = await AgentProcess.start(rootDir, ['--node-cpu', '1']);
  ctx.defer(() => teardownAgent(rootDir, agent));
  const sock = agent.socket;
  const out: FreedTrial[] = [];
  for (let i = 0; i < trials * 2; i++) {
    const backoffRunning = i % 2 === 0;
    const list = JSON.parse(await must(socketGet(sock, PODS), 'list pods')) as { metadata: { resourceVersion: string } };
    const watch = new PodWatch();
    await watch.open(sock, list.metadata.resourceVersion);
    try {
      const holder = `holder-${i}`;
      const waiting = `waiting-${i}`;
      await must(socketGet(sock, PODS, 'POST', pod(holder, '1')), 'create holder');
      await watch.when(holder, 'running');
      await must(socketGet(sock, PODS, 'POST', pod(waiting, '500m')), 'create pending pod');
      const attempt = await watch.when(waiting, 'unschedulable');
      // The back-off is counted from the pod's last attempt: wait it out in the second case.
      if (!backoffRunning) await sleep(Math.max(0, attempt + 1500 - preciseNow()));
      const t0 = preciseNow();
      await must(socketGet(sock, `${PODS}/${holder}`, 'DELETE'), 'delete holder');
      const freed = await watch.when(holder, 'ended');
      const bound = await watch.when(waiting, 'bound');
      const running = await watch.when(waiting, 'running');
      out.push({
        backoffRunning,
        terminateMs: freed - t0,
        scheduleMs: bound - freed,
        backoffLeftMs: Math.max(0, attempt + 1000 - freed),
        startMs: running - bound,
        freedToRunningMs: running - freed,
      });
      ctx.log(
        `scheduler: freed→Running ${(running - freed).toFixed(0)} ms (back-off ${backoffRunning ? 'running' : 'expired'}: schedule ${(bound - freed).toFixed(0)} ms, start ${(running - bound).toFixed(0)} ms)`,
      );
      await must(socketGet(sock, `${PODS}/${waiting}?gracePeriodSeconds=0`, 'DELETE'), 'delete pending pod');
      await watch.when(waiting, 'ended');
    } finally {
      watch.close();
    }
  }
  await teardownAgent(rootDir, agent);
  return out;
}
