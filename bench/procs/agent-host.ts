// The agent under measurement, alone in its process: reads manifests with the project's loader and
// runs them with the kubelet the agent assembles (src/agent/assemble.ts) as `podvisor up` does. The only additions are the
// prober's lateness hook and a recorder that notes events; the bench reads CPU and RSS of this pid.
//
// Window counters: `iterations` (prober worker iterations, from the lateness hook), `probes` (probes
// executed, from prober_probe_total), `probe_failed` / `probe_errored` (Unhealthy events by kind).

import { availableParallelism, totalmem } from 'node:os';
import type { Pod, PodStatus } from '../../src/api/types.js';
import { assembleKubelet } from '../../src/agent/assemble.js';
import { stampCreation, startAdmitted } from '../../src/agent/in-process.js';
import { defaultNodeName, loadManifests, type LoadedManifests } from '../../src/config/load.js';
import type { EventObject, EventType } from '../../src/events/recorder.js';
import { EventStore } from '../../src/events/store.js';
import type { PodKubelet } from '../../src/kubelet/kubelet.js';
import { ProberManager } from '../../src/prober/manager.js';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { RuntimeService } from '../../src/runtime/cri.js';
import { runtimePodRules } from '../../src/runtime/pod-rules.js';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { connectOrLaunch } from '../../src/runtime/cri/launch.js';
import { defaultRuntimeEndpoint, loadProcessRuntime, lockHolder, processState, runtimeStateDir } from '../../src/runtime/process-runtime.js';
import { PodStatusManager } from '../../src/status/status-manager.js';
import { RealClock } from '../../src/util/clock.js';
import { streamLogger } from '../../src/util/logger.js';
import type { AgentWindow, EventNote, LoadParams, LoadReply, StartParams, StartReply, WaitParams, WaitReply } from '../lib/agent-protocol.js';
import { serve } from '../lib/child-server.js';
import { preciseNow } from '../lib/stats.js';
import { MeasureWindow } from '../lib/window.js';

interface Tracked {
  t0: number;
  running?: number;
  ready?: number;
}

function allRunning(status: PodStatus): boolean {
  const cs = status.containerStatuses ?? [];
  return cs.length > 0 && cs.every((c) => c.state?.running !== undefined);
}

function isReady(status: PodStatus): boolean {
  return (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

// The program's state lives in main(), one agent per process.
async function main(): Promise<void> {
  const window = new MeasureWindow();
  const tracked = new Map<string, Tracked>();
  const waiters = new Set<() => void>();
  let windowEvents: Record<string, number> = {};
  let probeTotalAtBegin = 0;
  let noteReasons = new Set<string>();
  let latest: LoadedManifests | undefined;
  let agent: { runtime: RuntimeService; kubelet: PodKubelet; prober: ProberManager; viaService: boolean; containerd: boolean } | undefined;
  let closing: Promise<void> | undefined;

  // Events are seen here before correlation and spam filtering, at the moment they are recorded.
  class NotingEventStore extends EventStore {
    override event(obj: EventObject, type: EventType, reason: string, message: string): void {
      windowEvents[reason] = (windowEvents[reason] ?? 0) + 1;
      if (reason === 'Unhealthy') window.count(message.includes(' probe errored') ? 'probe_errored' : 'probe_failed');
      if (noteReasons.has(reason)) {
        const note: EventNote = { reason, pod: obj.name, message, at: preciseNow() };
        server.note('event', note);
      }
      super.event(obj, type, reason, message);
    }
  }

  // Ready counts once the readiness probe's own Success is behind it, not a status that says Ready
  // before any readiness probe ran.
  function probedReady(pod: Pod, status: PodStatus): boolean {
    const probed = new Set((pod.spec?.containers ?? []).filter((c) => c.readinessProbe).map((c) => c.name));
    return (status.containerStatuses ?? []).every(
      (c) => !probed.has(c.name) || (c.containerID !== undefined && agent?.prober.readiness.get(c.containerID) === 'Success'),
    );
  }

  function onStatus(pod: Pod, status: PodStatus): void {
    const t = tracked.get(pod.metadata?.name ?? '');
    if (!t) return;
    const now = preciseNow();
    let changed = false;
    if (t.running === undefined && allRunning(status)) {
      t.running = now - t.t0;
      changed = true;
    }
    if (t.ready === undefined && isReady(status) && probedReady(pod, status)) {
      t.ready = now - t.t0;
      changed = true;
    }
    if (changed) for (const w of waiters) w();
  }

  async function probeTotal(): Promise<number> {
    if (!agent) return 0;
    const m = await agent.prober.metrics.probeTotal.get();
    return m.values.reduce((s, v) => s + v.value, 0);
  }

  async function load(p: LoadParams): Promise<LoadReply> {
    if (agent) throw new Error('already loaded');
    noteReasons = new Set(p.noteReasons);
    const clock = new RealClock();
    const logger = streamLogger(process.stderr, 'warn');
    const nodeName = defaultNodeName();
    // What the in-process agent (src/agent/in-process.ts) builds, with the status manager, recorder
    // and prober made here so the prober's lateness hook and the noting recorder can be installed.
    let runtime: RuntimeService;
    let runtimePid: number | undefined;
    if (p.criEndpoint) {
      runtime = new CriRuntimeClient({ endpoint: p.criEndpoint, logger, name: 'containerd', warmCodecs: true });
    } else if (p.viaService) {
      const cli = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));
      const launched = await connectOrLaunch({
        endpoint: defaultRuntimeEndpoint(p.rootDir),
        logger,
        command: [process.execPath, cli, 'runtime', 'serve', '--root-dir', p.rootDir],
        logFile: join(p.rootDir, 'runtime.log'),
        warmCodecs: true,
      });
      runtime = launched.client;
      runtimePid = lockHolder(runtimeStateDir(p.rootDir), (pid, start) => processState(pid, start) === 'running');
    } else {
      runtime = new (await loadProcessRuntime()).ProcessRuntime({ rootDir: p.rootDir, clock, logger });
    }
    const statusManager = new PodStatusManager({ clock, logger });
    const events = new NotingEventStore({ clock, host: nodeName });
    const prober = new ProberManager({
      clock,
      logger,
      runtime,
      recorder: events,
      statusProvider: statusManager,
      onProbeStart: (dueMs, actualMs) => {
        window.count('iterations');
        window.late(actualMs - dueMs);
      },
    });
    const kubelet = assembleKubelet({
      settings: { rootDir: p.rootDir, node: { cpuMilli: availableParallelism() * 1000, memoryBytes: totalmem(), pods: p.maxPods } },
      runtime,
      clock,
      logger,
      nodeName,
      lookup: {
        configMap: (ns, name) => latest?.configMap(ns, name),
        secret: (ns, name) => latest?.secret(ns, name),
      },
      probeMetrics: 'none',
      parts: { statusManager, events, probeManager: prober },
    });
    kubelet.onPodStatus(onStatus);
    agent = { runtime, kubelet, prober, viaService: !!p.viaService, containerd: !!p.criEndpoint };
    return { createdAt: prober.startMs, ...(runtimePid ? { runtimePid } : {}) };
  }

  async function start(p: StartParams): Promise<StartReply> {
    if (!agent) throw new Error('load first');
    const { kubelet } = agent;
    const t0 = preciseNow();
    // As `podvisor up -f DIR` does: load, stamp, admit in order, start the admitted.
    const loaded = await loadManifests([p.manifestDir], {
      validate: 'strict',
      extraValidation: runtimePodRules(agent.runtime.capabilities),
      nodeName: defaultNodeName(),
    });
    latest = loaded;
    const loadMs = preciseNow() - t0;
    stampCreation(loaded.pods, Date.now());
    // As `podvisor up` through the runtime service: pods it still runs are adopted.
    if (agent.viaService) await kubelet.recover(loaded.pods);
    for (const pod of loaded.pods) tracked.set(pod.metadata?.name ?? '', { t0 });
    const rejected: StartReply['rejected'] = [];
    startAdmitted(kubelet, loaded.pods, (r) => rejected.push({ name: r.pod.metadata?.name ?? '', reason: r.reason, message: r.message }));
    const refused = new Set(rejected.map((r) => r.name));
    const pods = loaded.pods.map((p) => p.metadata?.name ?? '').filter((n) => !refused.has(n));
    if (rejected.length) throw new Error(`${rejected.length} pods rejected, first: ${rejected[0]!.name}: ${rejected[0]!.reason}: ${rejected[0]!.message}`);
    return { t0, loadMs, pods, rejected };
  }

  function waitFor(p: WaitParams): Promise<WaitReply> {
    const names = p.pods ?? [...tracked.keys()];
    const field = p.condition;
    const collect = (): WaitReply | undefined => {
      const times: Record<string, number> = {};
      for (const n of names) {
        const v = tracked.get(n)?.[field];
        if (v === undefined) return undefined;
        times[n] = v;
      }
      return { times };
    };
    const done = collect();
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const check = () => {
        const r = collect();
        if (!r) return;
        finish();
        resolve(r);
      };
      const timer = setTimeout(() => {
        finish();
        const missing = names.filter((n) => tracked.get(n)?.[field] === undefined);
        reject(new Error(`${missing.length} of ${names.length} pods not ${field} after ${p.timeoutMs} ms (first: ${missing.slice(0, 3).join(', ')})`));
      }, p.timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
    });
  }

  async function begin(): Promise<void> {
    windowEvents = {};
    probeTotalAtBegin = await probeTotal();
    window.begin();
  }

  async function read(): Promise<AgentWindow> {
    const report = window.read();
    const probes = (await probeTotal()) - probeTotalAtBegin;
    return { ...report, counters: { ...report.counters, probes }, events: { ...windowEvents } };
  }

  function shutdown(): Promise<void> {
    closing ??= (async () => {
      if (!agent) return;
      await agent.kubelet.terminateAll({ gracePeriodSeconds: 0 }).catch(() => {});
      await agent.kubelet.close();
    })();
    return closing;
  }

  const server = serve(
    {
      load,
      start,
      waitFor,
      terminateAll: async ({ gracePeriodSeconds }: { gracePeriodSeconds: number }) => {
        await agent?.kubelet.terminateAll({ gracePeriodSeconds });
        return null;
      },
      begin,
      read,
      stop: async () => {
        const report = await read();
        await shutdown();
        return report;
      },
    },
    shutdown,
  );
}

await main();
