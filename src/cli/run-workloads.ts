// `run -f` of manifests holding Services or workloads (Deployments, ReplicaSets, StatefulSets,
// DaemonSets, Jobs, CronJobs), which need the agent's controllers, or of any manifests when an agent
// serves the root dir: they run through the agent of the root dir (started for the run when none
// serves it, and stopped after): apply everything, wait
// (each pod as run waits, each workload rolled out or complete), print the pods and what failed with
// the failed pods' reasons and log tails, then delete what was applied and wait until its pods are gone.

import type { Pod } from '../api/types.js';
import { containerExit, type PodWaitMode } from '../kubelet/wait-engine.js';
import type { LoadedManifests } from '../config/load.js';
import { qualifiedName } from '../config/object-kinds.js';
import { formatPodTable } from '../printers/tables.js';
import { formatObject, toV1List } from '../printers/json-yaml.js';
import type { CommandIO, ParsedArgs } from './args.js';
import { agentRequest, ensureAgent, replyMessage, stopAgent } from './agent-client.js';
import { applyObjects, type AppliedObject } from './apply-objects.js';
import { apiPath } from './kube-client.js';
import { objectPath, type AppliedRef } from './object-paths.js';
import { logReader, waitForPods } from './pod-waiter.js';
import { followPodLogs, type PodLogFollower } from './agent-logs.js';
import { exitCodeOf, ownedByRun, type ExitTarget } from './exit-target.js';
import { containerProblem, withLogTails, type SummaryPod } from '../printers/run-summary.js';
import { agentArgsFrom } from './up-detached.js';
import { setLongTimeout } from '../util/timer.js';
import { podsOf, waitForWorkloads } from './workload-waiter.js';
import { followReachability } from './ingress-reachable.js';
import { nodePortAddressesOf } from './service-reachable.js';

export interface AgentRunOptions {
  wait: PodWaitMode;
  timeoutMs: number;
  timeoutText: string;
  output: 'table' | 'wide' | 'json' | 'yaml';
  progressEveryMs?: number;
  /** --exit-code-from: this pod's or Job's container exit code is the command's. */
  exitTarget?: ExitTarget;
  /** --logs: every container's output, prefixed `pod/container | `, goes here. */
  logsTo?: NodeJS.WritableStream;
  /** --junit: the report's file. */
  junitFile?: string;
}

/** How a pod of the run ended up: Succeeded, or Running and Ready with no container in trouble, is ok. */
function podOutcome(pod: Pod): SummaryPod {
  const phase = pod.status?.phase ?? 'Pending';
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const problem = statuses.map((cs) => containerProblem(cs)).find((p) => p !== undefined);
  const ready = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  if (phase === 'Succeeded' || (phase === 'Running' && ready && !problem)) return { pod, ok: true };
  return { pod, ok: false, error: problem ? `${phase}: ${problem}` : phase === 'Running' ? 'Running, not ready' : phase };
}

type Owned = Pod['metadata'] & { uid?: string };

/** What a run applied, read back from the agent: the objects with their status and every pod of them. */
export async function readBack(root: string, objects: readonly AppliedRef[], pods: readonly AppliedObject[]): Promise<{ objects: object[]; pods: Pod[] }> {
  const namespaces = new Set([...objects.map((o) => o.ns), ...pods.map((p) => p.ns)]);
  const allPods: Pod[] = [];
  const replicaSets: { metadata?: Owned }[] = [];
  for (const ns of namespaces) {
    const r = await agentRequest(root, 'GET', apiPath('pods', ns));
    if (r.status === 200) allPods.push(...r.json<{ items: Pod[] }>().items);
    const rs = await agentRequest(root, 'GET', objectPath('apps/v1', 'ReplicaSet', ns));
    if (rs.status === 200) replicaSets.push(...rs.json<{ items: { metadata?: Owned }[] }>().items);
  }
  const current: object[] = [];
  const owned: Pod[] = [];
  for (const ref of objects) {
    const r = await agentRequest(root, 'GET', objectPath(ref.object.apiVersion, ref.kind, ref.ns, ref.name));
    if (r.status !== 200) continue;
    const obj = r.json<{ metadata?: Owned }>();
    current.push(obj);
    owned.push(...podsOf(obj, allPods, replicaSets as never));
  }
  const bare = allPods.filter((p) => pods.some((a) => a.ns === p.metadata?.namespace && a.name === p.metadata?.name));
  return { objects: current, pods: [...owned, ...bare].map((p) => ({ apiVersion: 'v1', kind: 'Pod', ...p })) };
}

/** Deletes what the run applied (workloads with their pods, by background propagation) and waits until those pods are gone. */
export async function tearDown(
  root: string,
  loaded: LoadedManifests,
  objects: readonly AppliedRef[],
  pods: readonly Pod[],
  io: CommandIO,
  { quiet = false } = {},
): Promise<void> {
  const running = quiet ? [] : pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  if (running.length) io.stderr.write(`stopping ${running.length} pod${running.length === 1 ? '' : 's'} gracefully\n`);
  const del = async (path: string) => {
    const r = await agentRequest(root, 'DELETE', `${path}?propagationPolicy=Background`);
    if (r.status !== 200 && r.status !== 202 && r.status !== 404) io.stderr.write(`error: deleting ${path}: ${replyMessage(r).message}\n`);
  };
  // A Namespace goes last, once what it holds is gone.
  const namespaces = objects.filter((ref) => ref.kind === 'Namespace');
  for (const ref of [...objects].reverse()) if (ref.kind !== 'Namespace') await del(objectPath(ref.object.apiVersion, ref.kind, ref.ns, ref.name));
  for (const p of loaded.pods) await del(apiPath('pods', p.metadata?.namespace ?? 'default', p.metadata?.name ?? ''));
  const deadline = Date.now() + 120_000;
  const uids = new Set(pods.map((p) => p.metadata?.uid));
  for (;;) {
    const left: Pod[] = [];
    for (const ns of new Set(pods.map((p) => p.metadata?.namespace ?? 'default'))) {
      const r = await agentRequest(root, 'GET', apiPath('pods', ns));
      if (r.status === 200) left.push(...r.json<{ items: Pod[] }>().items.filter((p) => uids.has(p.metadata?.uid)));
    }
    if (left.length === 0) break;
    if (Date.now() > deadline) {
      io.stderr.write(`error: ${left.length} pod${left.length === 1 ? '' : 's'} still terminating after 120s\n`);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const cm of loaded.configMaps) await del(apiPath('configmaps', cm.metadata?.namespace ?? 'default', cm.metadata?.name ?? ''));
  for (const s of loaded.secrets) await del(apiPath('secrets', s.metadata?.namespace ?? 'default', s.metadata?.name ?? ''));
  for (const ref of namespaces) await del(objectPath(ref.object.apiVersion, ref.kind, undefined, ref.name));
  if (running.length) io.stderr.write('all pods stopped\n');
}

/** `run` through the agent of the root dir; resolves to the exit code (0 all made it, 1 any failed, 2 invalid). */
export async function runThroughAgent(parsed: ParsedArgs, io: CommandIO, loaded: LoadedManifests, rootDir: string, opts: AgentRunOptions): Promise<number> {
  let started = false;
  const agentArgs = agentArgsFrom(parsed);
  try {
    started = (await ensureAgent(rootDir, agentArgs)).started;
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  if (started) io.stderr.write(`started the podvisor agent for ${rootDir} for this run (log: ${rootDir}/agent.log)\n`);
  else if (agentArgs.length)
    io.stderr.write(
      `warning: the agent for ${rootDir} already runs: ${agentArgs.join(' ')} ${agentArgs.length === 1 ? 'applies' : 'apply'} only to an agent run starts (podvisor agent status shows how it runs)\n`,
    );
  const startedAt = Date.now();
  let logs: PodLogFollower | undefined;
  /** The exit code of the container --exit-code-from names, as its end was seen (a restarted one's first end). */
  let exitSeen: number | undefined;
  try {
    // What was applied goes to stderr: stdout holds the pods (or the List of -o json|yaml).
    const applied = await applyObjects(rootDir, loaded, { stdout: io.stderr, stderr: io.stderr }, { immutable: 'replace', namespaces: 'create' });
    let code = applied.code;
    if (code === 0 && opts.logsTo) logs = followPodLogs(rootDir, (pod) => ownedByRun(pod, loaded, applied.objects), opts.logsTo);
    if (code === 0) {
      // Each Service's URLs once it has Ready endpoints, while the run waits.
      const reachability = new AbortController();
      const reachable = followReachability(
        rootDir,
        applied.objects,
        await nodePortAddressesOf(rootDir, parsed.flags['nodeport-addresses']),
        (line) => io.stderr.write(`${line}\n`),
        reachability.signal,
      );
      const watching = reachable.watching.catch(() => undefined);
      // The pod --exit-code-from names is waited for until it (or its named container) has
      // finished, whatever --wait says; when that wait ends, the others end with it.
      const target = opts.exitTarget;
      const isExitPod = (p: { ns: string; name: string }) => target?.kind === 'Pod' && p.ns === target.ns && p.name === target.name;
      const exitEnded = new AbortController();
      const endWithExit = () => exitEnded.abort();
      const cut = { signal: exitEnded.signal, by: target?.container ? `container ${target.container} of pod/${target.name}` : `pod/${target?.name ?? ''}` };
      const exitPods = applied.pods.filter((p) => isExitPod(p));
      const waited = await Promise.all([
        exitPods.length === 0
          ? 0
          : waitForPods(
              rootDir,
              exitPods,
              {
                target: target?.container ? { kind: 'exit', container: target.container } : { kind: 'mode', mode: 'completed' },
                timeoutMs: opts.timeoutMs,
                timeoutText: opts.timeoutText,
                ...(opts.progressEveryMs ? { progressEveryMs: opts.progressEveryMs } : {}),
                onUpdate: (pod) => {
                  if (exitSeen === undefined && target?.container) exitSeen = containerExit(pod, pod.status, target.container);
                },
              },
              io,
            ).finally(endWithExit),
        waitForPods(
          rootDir,
          applied.pods.filter((p) => !isExitPod(p)),
          {
            target: { kind: 'mode', mode: opts.wait },
            timeoutMs: opts.timeoutMs,
            timeoutText: opts.timeoutText,
            ...(opts.progressEveryMs ? { progressEveryMs: opts.progressEveryMs } : {}),
            ...(exitPods.length ? { cut } : {}),
          },
          io,
        ),
        waitForWorkloads(
          rootDir,
          applied.objects,
          {
            timeoutMs: opts.timeoutMs,
            timeoutText: opts.timeoutText,
            ...(opts.progressEveryMs ? { progressEveryMs: opts.progressEveryMs } : {}),
            onMet: (ref, text) => io.stderr.write(`${qualifiedName(ref.object)}: ${text}\n`),
            ...(exitPods.length ? { cut } : {}),
          },
          io,
        ),
      ]);
      code = Math.max(code, ...waited);
      // The endpoints follow readiness within a second: what is up is announced before the table.
      if (code === 0) {
        let grace: { cancel(): void } | undefined;
        await Promise.race([reachable.allAnnounced, watching, new Promise((r) => (grace = setLongTimeout(() => r(undefined), 2000)))]);
        grace?.cancel();
      }
      reachability.abort();
      await watching;
    }
    await logs?.stop();
    logs = undefined;
    const state = await readBack(rootDir, applied.objects, applied.pods);
    const outcomes = state.pods.map(podOutcome);
    const readLog = logReader(rootDir);
    if (opts.junitFile) {
      const { writeJUnitReport } = await import('../printers/junit.js');
      await writeJUnitReport(opts.junitFile, { name: 'podvisor run', pods: outcomes, startedAt, durationMs: Date.now() - startedAt, readLog });
    }
    if (opts.output === 'json' || opts.output === 'yaml') {
      // Each failed pod carries its failed containers' log tails in annotations (podvisor.io/log-tail.<container>).
      const shown = await Promise.all(outcomes.map((o) => (o.ok ? o.pod : withLogTails(o.pod, readLog))));
      io.stdout.write(formatObject(toV1List([...state.objects, ...shown]), opts.output));
    } else if (state.pods.length) io.stdout.write(formatPodTable(state.pods, { wide: opts.output === 'wide', now: Date.now() }));
    const count = applied.objects.length + applied.pods.length;
    if (code === 0) io.stderr.write(count === 1 ? '1 object ok\n' : `all ${count} objects ok\n`);
    await tearDown(rootDir, loaded, applied.objects, state.pods, io);
    if (opts.exitTarget && applied.code === 0) {
      if (exitSeen !== undefined) return exitSeen;
      const exit = exitCodeOf(opts.exitTarget, state.pods);
      if (typeof exit === 'number') return exit;
      io.stderr.write(`error: ${exit.error}\n`);
      return 1;
    }
    return code;
  } finally {
    await logs?.stop(0);
    if (started) await stopAgent(rootDir).catch((err: Error) => io.stderr.write(`error: ${err.message}\n`));
  }
}
