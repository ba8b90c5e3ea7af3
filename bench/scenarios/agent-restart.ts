// kill -9 of `podvisor agent` with N pods applied by `up -d`, then a new agent on the same root dir:
// the time until every pod's status in `/pods` is current again (all containers Running), how many
// containers came back under a new ID (restarted rather than adopted), and how many processes of
// the killed agent were left behind. Whatever runtime the agent uses is what this measures.

import { AgentProcess, cliPath, descendants, killSet, podvisor, runtimeServicePid, socketGet, teardownAgent, type ProcessSet } from '../lib/agent-process.js';
import { distribution, preciseNow } from '../lib/stats.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { Pod } from '../../src/api/types.js';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { agentWorkspace, runningPods } from './agent.js';
import { sleep, type Scenario } from './types.js';

const POLL_MS = 100;

function containerIds(list: { items?: Pod[] }): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of list.items ?? []) for (const c of p.status?.containerStatuses ?? []) out.set(`${p.metadata?.name}/${c.name}`, c.containerID ?? '');
  return out;
}

export const agentRestart: Scenario = {
  name: 'agent-restart',
  defaultSizes: [100],
  sizeIsPods: true,
  async run(n, ctx): Promise<ScenarioResult> {
    const ws = agentWorkspace('rst', n);
    ctx.defer(() => ws.remove());
    const leftovers: ProcessSet = new Map();
    const first = await AgentProcess.start(ws.rootDir, ['--max-pods', String(n + 10)]);
    let current: AgentProcess | undefined = first;
    ctx.defer(() => teardownAgent(ws.rootDir, current, leftovers));
    ctx.log(`agent-restart N=${n}: up -d of ${n} pods`);
    const up = await podvisor(['up', '-d', '-f', ws.manifestDir, '--root-dir', ws.rootDir, '--timeout', '10m'], 15 * 60_000);
    if (up.code !== 0) throw new Error(`podvisor up -d exited ${up.code}: ${up.stderr.slice(-2000)}`);
    await sleep(2_000);
    const before = JSON.parse((await first.get('/pods')).body) as { items: Pod[] };
    const idsBefore = containerIds(before);
    const svcBefore = runtimeServicePid(ws.rootDir);
    for (const [p, s] of descendants(first.pid)) leftovers.set(p, s);

    ctx.log(`agent-restart N=${n}: kill -9 of the agent (pid ${first.pid}), then a new agent`);
    await first.killHard();
    const out = openSync(join(ws.rootDir, 'bench-agent.log'), 'a');
    const t0 = preciseNow();
    const proc = spawn(process.execPath, [cliPath, 'agent', '--root-dir', ws.rootDir, '--max-pods', String(n + 10)], { stdio: ['ignore', out, out] });
    closeSync(out);
    const socket = join(ws.rootDir, 'podvisor.sock');
    const firstCurrent = new Map<string, number>();
    let servingMs: number | undefined;
    let last: { items: Pod[] } = { items: [] };
    const deadline = Date.now() + 60_000 + n * 200;
    while (firstCurrent.size < n && Date.now() < deadline && proc.exitCode === null) {
      try {
        const r = await socketGet(socket, '/pods');
        if (r.status === 200) {
          servingMs ??= preciseNow() - t0;
          last = JSON.parse(r.body) as { items: Pod[] };
          const now = preciseNow() - t0;
          for (const p of runningPods(last)) if (!firstCurrent.has(p.metadata!.name!)) firstCurrent.set(p.metadata!.name!, now);
        }
      } catch {
        // not serving yet
      }
      await sleep(POLL_MS);
    }
    current = AgentProcess.wrap(ws.rootDir, proc);
    const idsAfter = containerIds(last);
    let changed = 0;
    for (const [k, id] of idsBefore) if (idsAfter.get(k) !== id) changed++;
    // Processes of the killed agent still alive that the new agent does not own.
    const svcAfter = runtimeServicePid(ws.rootDir);
    // The runtime service itself was the killed agent's child (it starts it on demand): it is owned
    // when it is the one the new agent uses.
    const owned = new Set<number>([...(proc.pid ? descendants(proc.pid).keys() : []), ...(svcAfter ? [svcAfter, ...descendants(svcAfter).keys()] : [])]);
    let orphans = 0;
    for (const pid of leftovers.keys()) {
      try {
        process.kill(pid, 0);
        if (!owned.has(pid)) orphans++;
      } catch {
        // gone
      }
    }
    // The orphans are killed now so they do not share the machine with what follows.
    killSet(new Map([...leftovers].filter(([pid]) => !owned.has(pid))));

    const d = distribution([...firstCurrent.values()]);
    const notes = [
      svcBefore
        ? `pods run through the runtime service (pid ${svcBefore}${svcAfter === svcBefore ? ', the same one after the restart' : ''})`
        : 'the agent ran its pods on the in-process runtime (no runtime service for the root dir)',
      `times from spawning the new agent; /pods polled every ${POLL_MS} ms over the unix socket (a pod counts once every container shows Running)`,
      `floor: the first agent's start on the same, empty root dir, spawn to /healthz answering`,
    ];
    if (firstCurrent.size < n) notes.push(`${n - firstCurrent.size} of ${n} pods never showed Running again within the deadline`);
    return {
      scenario: 'agent-restart',
      size: n,
      figures: [
        figure('serving_ms', 'new agent serving /pods', 'ms', servingMs, first.readyMs),
        figure('current_p50_ms', 'pod status current again p50', 'ms', d.p50, first.readyMs),
        figure('current_all_ms', 'every pod status current again', 'ms', firstCurrent.size === n ? d.max : null, first.readyMs),
        figure('containers_new_id', 'containers with a new ID (restarted, not adopted)', 'count', changed, 0),
        figure('orphans', 'processes of the killed agent left unowned', 'count', orphans, 0),
      ],
      notes,
      raw: { times: Object.fromEntries(firstCurrent), servingMs, firstReadyMs: first.readyMs, changed, orphans, leftovers: leftovers.size },
    };
  },
};
