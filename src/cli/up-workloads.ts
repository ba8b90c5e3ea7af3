// The foreground `up` of manifests holding Services or workloads: through the agent of the root dir
// (started for it when none serves it, and stopped after), as `run` of them: apply everything, then
// stream the events and a state line per change of each Deployment, ReplicaSet, StatefulSet,
// DaemonSet, Job and pod until SIGINT/SIGTERM, --for, or (when everything is meant to finish) every
// Job and pod has finished; then delete what was applied, print the pod table, and with -o one v1
// List of the Pods as they were and the Events.

import type { Event, Pod } from '../api/types.js';
import { qualifiedName } from '../config/object-kinds.js';
import type { LoadedManifests } from '../config/load.js';
import { EventStreamFormatter } from '../printers/events.js';
import { formatObject, toV1List, type ObjectFormat } from '../printers/json-yaml.js';
import { formatPodTable, podRow } from '../printers/tables.js';
import type { CommandIO, ParsedArgs } from './args.js';
import { ensureAgent, stopAgent } from './agent-client.js';
import { applyObjects } from './apply-objects.js';
import { objectPath, type AppliedRef } from './object-paths.js';
import { followWatch as follow } from './pod-watch.js';
import { readBack, tearDown } from './run-workloads.js';
import { agentArgsFrom } from './up-detached.js';
import { podsOf, waitedKinds } from './workload-waiter.js';
import { followReachability } from './ingress-reachable.js';
import { nodePortAddressesOf } from './service-reachable.js';
import { setLongTimeout } from '../util/timer.js';

interface WorkloadState {
  kind?: string;
  apiVersion?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; ownerReferences?: { controller?: boolean; uid?: string }[] };
  spec?: { replicas?: number; completions?: number };
  status?: {
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    desiredNumberScheduled?: number;
    numberReady?: number;
    succeeded?: number;
    failed?: number;
    active?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

const finishedCondition = (o: WorkloadState) => (o.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');

/** A workload's state line, from what `kubectl get` shows of it. */
export function workloadStateLine(o: WorkloadState): string {
  const s = o.status ?? {};
  const name = qualifiedName(o);
  switch (o.kind) {
    case 'Job': {
      const done = finishedCondition(o);
      const word = done ? (done.type === 'Failed' ? `Failed (${done.reason ?? ''})` : 'Complete') : 'Running';
      return `${name}: ${word}, completions ${s.succeeded ?? 0}/${o.spec?.completions ?? 1}, active ${s.active ?? 0}, failed ${s.failed ?? 0}`;
    }
    case 'DaemonSet':
      return `${name}: ready ${s.numberReady ?? 0}/${s.desiredNumberScheduled ?? 0}`;
    case 'Deployment':
      return `${name}: ready ${s.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}, up-to-date ${s.updatedReplicas ?? 0}, available ${s.availableReplicas ?? 0}`;
    default:
      return `${name}: ready ${s.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`;
  }
}

/** A pod's last state once deleted, as the kubelet left it: its containers' ends, not "Terminating". */
function asStopped(p: Pod): Pod {
  const { deletionTimestamp: _deleted, deletionGracePeriodSeconds: _grace, ...metadata } = p.metadata ?? {};
  return { apiVersion: 'v1', kind: 'Pod', ...p, metadata };
}

export async function upThroughAgent(parsed: ParsedArgs, io: CommandIO, loaded: LoadedManifests, rootDir: string, forMs: number | undefined): Promise<number> {
  const output = parsed.flags.output as ObjectFormat | undefined;
  let started = false;
  try {
    started = (await ensureAgent(rootDir, agentArgsFrom(parsed))).started;
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  if (started) io.stderr.write(`started the podvisor agent for ${rootDir} (log: ${rootDir}/agent.log)\n`);
  const stop = new AbortController();
  // The watch on the pods ends after the teardown, not at `stop`.
  const podsStop = new AbortController();
  let why = '';
  const stopWith = (reason: string) => {
    if (stop.signal.aborted) return;
    why = reason;
    stop.abort();
  };
  const onSignal = () => stopWith(String(io.signal?.reason ?? 'SIGTERM'));
  io.signal?.addEventListener('abort', onSignal, { once: true });
  const forTimer = forMs !== undefined ? setLongTimeout(() => stopWith(`--for=${String(parsed.flags.for)} elapsed`), forMs) : undefined;
  try {
    const applied = await applyObjects(rootDir, loaded, { stdout: io.stderr, stderr: io.stderr }, { immutable: 'replace', namespaces: 'create' });
    if (applied.code !== 0) {
      await tearDown(rootDir, loaded, applied.objects, [], io);
      return applied.code;
    }
    const events: Event[] = [];
    const pods = new Map<string, Pod>();
    const workloads = new Map<string, WorkloadState>();
    const replicaSets = new Map<string, WorkloadState>();
    const lastLine = new Map<string, string>();
    const say = (key: string, line: string) => {
      if (lastLine.get(key) === line) return;
      lastLine.set(key, line);
      io.stderr.write(`${line}\n`);
    };
    const isOurs = (p: Pod) =>
      loaded.pods.some((b) => b.metadata?.name === p.metadata?.name && (b.metadata?.namespace ?? 'default') === p.metadata?.namespace) ||
      [...workloads.values()].some((w) => podsOf(w, [p], replicaSets.values()).length > 0);
    // Everything meant to finish (only Jobs and pods that do not restart for ever): the run ends when all have.
    const finite =
      applied.objects.every((r) => r.kind === 'Job' || !waitedKinds.has(r.kind)) &&
      !applied.objects.some((r) => r.kind === 'CronJob') &&
      loaded.pods.every((p) => p.spec?.restartPolicy === 'Never' || p.spec?.restartPolicy === 'OnFailure');
    const checkFinished = () => {
      if (!finite) return;
      const jobs = applied.objects.filter((r) => r.kind === 'Job');
      const jobsDone = jobs.every((r) => {
        const o = workloads.get(`Job/${r.ns}/${r.name}`);
        return o !== undefined && finishedCondition(o) !== undefined;
      });
      const bare = [...pods.values()].filter((p) => loaded.pods.some((b) => b.metadata?.name === p.metadata?.name));
      const podsDone = bare.length === loaded.pods.length && bare.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
      if (jobsDone && podsDone) stopWith('everything has finished');
    };

    // The pods' last state, kept through the teardown (the watch on them outlives `stop`): the final table shows them stopped.
    const lastSeen = new Map<string, Pod>();
    const table = new EventStreamFormatter();
    const watches: Promise<void>[] = [
      follow<Event>(
        rootDir,
        '/api/v1/events?watch=1',
        (l) => {
          if (l.type === 'DELETED') return;
          events.push(l.object);
          io.stderr.write(table.format(l.object, Date.now()));
        },
        stop.signal,
      ),
      follow<Pod>(
        rootDir,
        '/api/v1/pods?watch=1',
        (l) => {
          const uid = l.object.metadata?.uid ?? '';
          lastSeen.set(uid, l.object);
          if (stop.signal.aborted) return;
          if (l.type === 'DELETED') return void pods.delete(uid);
          if (!isOurs(l.object)) return;
          pods.set(uid, l.object);
          const [name, ready, phase, restarts] = podRow(l.object, { now: Date.now() });
          say(uid, `pod/${name}: ${phase || 'Pending'}, ready ${ready}, restarts ${restarts!.split(' ')[0]}`);
          checkFinished();
        },
        podsStop.signal,
      ),
    ];
    watches.push(
      followReachability(
        rootDir,
        applied.objects,
        await nodePortAddressesOf(rootDir, parsed.flags['nodeport-addresses']),
        (line) => io.stderr.write(`${line}\n`),
        stop.signal,
      ).watching,
    );
    const kinds = new Map(applied.objects.filter((r) => waitedKinds.has(r.kind)).map((r) => [r.kind, r.object.apiVersion]));
    if (kinds.has('Deployment')) kinds.set('ReplicaSet', 'apps/v1');
    const wanted = (r: AppliedRef, o: WorkloadState) => r.kind === o.kind && r.ns === o.metadata?.namespace && r.name === o.metadata?.name;
    for (const [kind, apiVersion] of kinds) {
      watches.push(
        follow<WorkloadState>(
          rootDir,
          `${objectPath(apiVersion, kind, undefined)}?watch=1`,
          (l) => {
            const o = { ...l.object, kind, apiVersion };
            const key = `${kind}/${o.metadata?.namespace}/${o.metadata?.name}`;
            if (kind === 'ReplicaSet') {
              if (l.type === 'DELETED') replicaSets.delete(key);
              else replicaSets.set(key, o);
            }
            if (l.type === 'DELETED' || !applied.objects.some((r) => wanted(r, o))) return;
            workloads.set(key, o);
            say(key, workloadStateLine(o));
            checkFinished();
          },
          stop.signal,
        ),
      );
    }
    const broken = Promise.all(watches).then(
      () => undefined,
      (err: Error) => err,
    );
    const aborted = new Promise<undefined>((resolve) => stop.signal.addEventListener('abort', () => resolve(undefined), { once: true }));
    const err = await Promise.race([aborted, broken]);
    stopWith('the agent closed its watch');
    if (err) io.stderr.write(`error: ${err.message}\n`);

    const state = await readBack(rootDir, applied.objects, applied.pods);
    const running = state.pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    io.stderr.write(`${why}: stopping ${running.length} pod${running.length === 1 ? '' : 's'} gracefully\n`);
    await tearDown(rootDir, loaded, applied.objects, state.pods, io, { quiet: true });
    podsStop.abort();
    io.stderr.write('all pods stopped\n');
    // As `up` of pods alone: the table shows the pods as they are now, stopped; the exit code and -o keep the state before.
    const stopped = state.pods.map((p) => asStopped(lastSeen.get(p.metadata?.uid ?? '') ?? p));
    io.stderr.write(`\n${formatPodTable(stopped, { now: Date.now() })}`);
    if (output) io.stdout.write(formatObject(toV1List([...state.pods, ...events]), output));
    // As for pods: 1 when a Job failed or a pod of the manifests did.
    const jobFailed = [...workloads.values()].some((o) => finishedCondition(o)?.type === 'Failed');
    const podFailed = state.pods.some((p) => p.status?.phase === 'Failed' && loaded.pods.some((b) => b.metadata?.name === p.metadata?.name));
    return err || jobFailed || podFailed ? 1 : 0;
  } finally {
    podsStop.abort();
    forTimer?.cancel();
    io.signal?.removeEventListener('abort', onSignal);
    if (started) await stopAgent(rootDir).catch((e: Error) => io.stderr.write(`error: ${e.message}\n`));
  }
}
