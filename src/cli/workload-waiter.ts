// Waiting on the agent's workloads from the command line (`run`, `up -d`, `apply --wait` of
// Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs): a watch per kind and one on the
// pods, each update judged by the wait engine (a rollout as `kubectl rollout status`, a Job as
// `kubectl wait --for=condition=complete`), failing at once when a workload's pod cannot succeed;
// on failure the workload's failed pods with their reasons and log tails.

import type { Pod } from '../api/types.js';
import {
  cannotSucceed,
  heldSinceMs,
  instancesKey,
  isCreationEvent,
  oneTerminalLine,
  progressWidth,
  refusedCreation,
  rolloutStatus,
  type WaitEvent,
  type WorkloadObject,
} from '../kubelet/wait-engine.js';
import { formatRunSummary } from '../printers/run-summary.js';
import { qualifiedName } from '../config/object-kinds.js';
import type { CommandIO } from './args.js';
import { logReader, type WaitCut } from './pod-waiter.js';
import { awaitWatchedWait, followWatch as follow } from './pod-watch.js';
import { SettleHolds } from './settle-holds.js';
import { objectPath, type AppliedRef } from './object-paths.js';

export interface WorkloadWaitOptions {
  timeoutMs: number;
  timeoutText: string;
  progressEveryMs?: number;
  /** Told of each workload once it is rolled out or complete (`deployment "web" successfully rolled out`). */
  onMet?: (ref: AppliedRef, text: string) => void;
  /** Ends the wait early (run --exit-code-from: the exit pod has ended): each workload is judged by what it has reached. */
  cut?: WaitCut;
}

type Stored = WorkloadObject & {
  apiVersion?: string;
  metadata?: WorkloadObject['metadata'] & { namespace?: string; uid?: string; ownerReferences?: { controller?: boolean; uid?: string }[] };
};

/** The kinds whose objects are waited for; the others are done once applied. */
export const waitedKinds = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job']);

const keyOf = (kind: string, ns: string | undefined, name: string | undefined) => `${kind}/${ns ?? 'default'}/${name ?? ''}`;

/** The pods a workload owns, through its ReplicaSets for a Deployment (controller ownerReferences). */
export function podsOf(owner: { metadata?: { uid?: string } }, pods: Iterable<Pod>, replicaSets: Iterable<Stored>): Pod[] {
  const uid = owner.metadata?.uid;
  if (!uid) return [];
  const owners = new Set([uid]);
  for (const rs of replicaSets) if (controllerUid(rs) === uid && rs.metadata?.uid) owners.add(rs.metadata.uid);
  return [...pods].filter((p) => owners.has(controllerUid(p) ?? ''));
}

/**
 * How long a rollout must hold with the same container instances before it counts, as run's settle
 * check for pods: a crashing container caught Ready in one of its short runs has not rolled out.
 * 5 s when the template has no readiness probe (Ready means only running), else 1 s.
 */
function settleMsOf(o: Stored): number {
  if (o.kind === 'Job') return 0;
  const containers = (o.spec as { template?: { spec?: { containers?: { readinessProbe?: unknown }[] } } } | undefined)?.template?.spec?.containers ?? [];
  return containers.some((c) => c.readinessProbe) ? 1000 : 5000;
}

function controllerUid(o: { metadata?: { ownerReferences?: { controller?: boolean; uid?: string }[] } }): string | undefined {
  return (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true)?.uid;
}

/** A pod worth reporting when its workload failed: Failed, or with a container that failed or cannot run. */
function podFailed(p: Pod): boolean {
  if (p.status?.phase === 'Failed' || cannotSucceed(p.status)) return true;
  return [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].some(
    (cs) => (cs.state?.terminated?.exitCode ?? 0) !== 0 || (cs.lastState?.terminated?.exitCode ?? 0) !== 0,
  );
}

/**
 * Waits until every workload is rolled out (or complete), one fails for good, or the timeout passes;
 * a progress line every progressEveryMs on stderr, and on failure each failed workload with its
 * failed pods' reasons and log tails. Resolves to the exit code (0, 1, 130 when interrupted).
 */
export async function waitForWorkloads(root: string, refs: readonly AppliedRef[], opts: WorkloadWaitOptions, io: CommandIO): Promise<number> {
  const targets = refs.filter((r) => waitedKinds.has(r.kind));
  if (targets.length === 0) return 0;
  const latest = new Map<string, Stored>();
  const pods = new Map<string, Pod>();
  const replicaSets = new Map<string, Stored>();
  /** Each workload's latest pod-creation event (by its uid), from those recorded since the wait began. */
  const lastCreation = new Map<string, WaitEvent>();
  // Events have second resolution: one of the second the wait began counts.
  const since = Math.floor(Date.now() / 1000) * 1000;
  const pending = new Set(targets.map((r) => keyOf(r.kind, r.ns, r.name)));
  const failed = new Map<string, { ref: AppliedRef; error: string }>();
  const holds = new SettleHolds(() => judge());
  const stop = new AbortController();
  let resolveFinished!: () => void;
  const finished = new Promise<void>((r) => (resolveFinished = r));

  const judge = () => {
    for (const ref of targets) {
      const key = keyOf(ref.kind, ref.ns, ref.name);
      if (!pending.has(key)) continue;
      const obj = latest.get(key);
      if (!obj) continue;
      const r = rolloutStatus(obj);
      if (r.state === 'fail') {
        pending.delete(key);
        failed.set(key, { ref, error: r.text });
        continue;
      }
      const refused = r.state === 'wait' ? refusedCreation(obj, lastCreation.get(obj.metadata?.uid ?? '')) : undefined;
      if (refused) {
        pending.delete(key);
        failed.set(key, { ref, error: refused });
        continue;
      }
      const owned = podsOf(obj, pods.values(), replicaSets.values());
      // A Job retries its failed pods up to its backoffLimit; a rollout cannot finish while a pod of it cannot run.
      const hopeless = ref.kind === 'Job' ? undefined : owned.map((p) => ({ p, why: cannotSucceed(p.status) })).find((x) => x.why);
      if (hopeless) {
        pending.delete(key);
        // The status caught while the pod was briefly up may read "rolled out": the rollout cannot hold.
        const status = r.state === 'wait' ? r.text.replace(/\.\.\.$/, '') : `${ref.kind.toLowerCase()} "${ref.name}" cannot stay available`;
        failed.set(key, { ref, error: `${status}: pod/${hopeless.p.metadata?.name ?? ''} cannot run: ${hopeless.why}` });
        continue;
      }
      if (r.state === 'wait') {
        holds.drop(key);
        continue;
      }
      // Rolled out: held long enough by the same container instances?
      const instances = owned.map((p) => `${p.metadata?.uid}:${instancesKey(p.status)}`).join(';');
      const heldSince = Math.max(-Infinity, ...owned.map((p) => heldSinceMs(p.status)));
      if (!holds.held(key, instances, settleMsOf(obj), heldSince)) continue;
      pending.delete(key);
      opts.onMet?.(ref, r.text);
    }
    if (pending.size === 0 || failed.size > 0) resolveFinished();
  };

  // One watch per kind waited for (the ReplicaSets too for Deployments, to find their pods), one on the pods.
  const kinds = new Map(targets.map((r) => [r.kind, r.object.apiVersion]));
  if (kinds.has('Deployment')) kinds.set('ReplicaSet', 'apps/v1');
  const watches = [...kinds].map(([kind, apiVersion]) =>
    follow<Stored>(
      root,
      `${objectPath(apiVersion, kind, undefined)}?watch=1`,
      (l) => {
        const o = l.object;
        const key = keyOf(kind, o.metadata?.namespace, o.metadata?.name);
        if (kind === 'ReplicaSet') {
          if (l.type === 'DELETED') replicaSets.delete(key);
          else replicaSets.set(key, o);
        }
        if (!pending.has(key)) return judge();
        if (l.type === 'DELETED') {
          pending.delete(key);
          failed.set(key, { ref: targets.find((t) => keyOf(t.kind, t.ns, t.name) === key)!, error: 'deleted while waiting' });
        } else latest.set(key, { ...o, kind });
        judge();
      },
      stop.signal,
    ),
  );
  watches.push(
    follow<Pod>(
      root,
      '/api/v1/pods?watch=1',
      (l) => {
        const uid = l.object.metadata?.uid ?? '';
        if (l.type === 'DELETED') pods.delete(uid);
        else pods.set(uid, l.object);
        judge();
      },
      stop.signal,
    ),
  );

  // The controllers' FailedCreate/SuccessfulCreate events: a Job, StatefulSet or DaemonSet whose pods are refused fails at once.
  if (targets.some((r) => r.kind === 'Job' || r.kind === 'StatefulSet' || r.kind === 'DaemonSet')) {
    watches.push(
      follow<WaitEvent & { lastTimestamp?: string; eventTime?: string }>(
        root,
        '/api/v1/events?watch=1',
        (l) => {
          const e = l.object;
          const uid = e.involvedObject?.uid;
          if (l.type === 'DELETED' || !uid || !isCreationEvent(e)) return;
          if (Date.parse(e.lastTimestamp ?? e.eventTime ?? '') < since) return;
          lastCreation.set(uid, e);
          judge();
        },
        stop.signal,
      ),
    );
  }

  const width = Math.max(40, (io.stderr as { columns?: number }).columns ?? progressWidth);
  const progress = setInterval(() => {
    const waiting = targets
      .filter((r) => pending.has(keyOf(r.kind, r.ns, r.name)))
      .map((r) => {
        const o = latest.get(keyOf(r.kind, r.ns, r.name));
        if (!o) return `${qualifiedName(r.object)}: not found`;
        const status = rolloutStatus(o);
        // Rolled out but still in its settle hold: onMet says "successfully rolled out" once it holds.
        return status.state === 'done' ? `${qualifiedName(r.object)}: rolled out, checking that it holds for ${settleMsOf(o) / 1000}s...` : status.text;
      });
    io.stderr.write(`${oneTerminalLine(waiting.join('; '), width)}\n`);
  }, opts.progressEveryMs ?? 5000);
  let cutShort = false;
  const onCut = () => {
    cutShort = true;
    resolveFinished();
  };
  if (opts.cut?.signal.aborted) onCut();
  else opts.cut?.signal.addEventListener('abort', onCut, { once: true });
  const end = await awaitWatchedWait({ finished, finish: resolveFinished, watches, timeoutMs: opts.timeoutMs, signal: io.signal, progress, stop });
  opts.cut?.signal.removeEventListener('abort', onCut);
  if (end === 'met' && cutShort) {
    for (const ref of targets) {
      const key = keyOf(ref.kind, ref.ns, ref.name);
      if (!pending.has(key)) continue;
      const o = latest.get(key);
      const status = o ? rolloutStatus(o) : undefined;
      if (status?.state === 'done') opts.onMet?.(ref, status.text);
      else failed.set(key, { ref, error: `${status ? status.text.replace(/\.\.\.$/, '') : 'not found'} when ${opts.cut!.by} ended` });
    }
  }
  if (typeof end === 'object') {
    io.stderr.write(`error: ${end.error.message}\n`);
    return 1;
  }
  if (end === 'aborted') return 130;
  if (end === 'timed-out') {
    for (const ref of targets) {
      const key = keyOf(ref.kind, ref.ns, ref.name);
      if (!pending.has(key)) continue;
      const o = latest.get(key);
      failed.set(key, { ref, error: `timed out after ${opts.timeoutText}: ${o ? rolloutStatus(o).text : 'not found'}` });
    }
  }
  if (failed.size === 0) return 0;
  await reportFailures(root, [...failed.values()], latest, pods, replicaSets, io);
  return 1;
}

/** Each failed workload: the reason, then its failed pods (reasons, messages, log tails) as run reports pods. */
async function reportFailures(
  root: string,
  failures: { ref: AppliedRef; error: string }[],
  latest: Map<string, Stored>,
  pods: Map<string, Pod>,
  replicaSets: Map<string, Stored>,
  io: CommandIO,
): Promise<void> {
  for (const f of failures) {
    io.stderr.write(`error: ${qualifiedName(f.ref.object)}: ${f.error}\n`);
    const obj = latest.get(keyOf(f.ref.kind, f.ref.ns, f.ref.name));
    const bad = obj ? podsOf(obj, pods.values(), replicaSets.values()).filter(podFailed) : [];
    if (bad.length === 0) continue;
    const summary = await formatRunSummary(
      bad.map((pod) => ({ pod, ok: false, error: pod.status?.phase === 'Failed' ? 'pod failed' : (cannotSucceed(pod.status) ?? 'a container failed') })),
      'ok',
      logReader(root),
    );
    io.stderr.write(summary.replace(/^\d+ of \d+ pods? failed:\n/, ''));
  }
}
