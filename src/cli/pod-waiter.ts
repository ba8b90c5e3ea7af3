// Waiting on the agent's pods from the command line (up -d --wait, apply --wait, `podvisor wait`):
// a watch on the pods and one on the events, each update judged by the wait engine; a progress line
// that fits one terminal line; and on failure each failed pod's reason, last warning and log tail,
// printed as run's summary prints them.

import type { ContainerStatus, Event, Pod } from '../api/types.js';
import {
  explainsWait,
  heldSinceMs,
  instancesKey,
  oneTerminalLine,
  pendingText,
  podWait,
  progressWidth,
  settleMsOf,
  targetText,
  type WaitEvent,
  type WaitTarget,
} from '../kubelet/wait-engine.js';
import { formatRunSummary, summaryLogLines } from '../printers/run-summary.js';
import type { CommandIO } from './args.js';
import { agentRequest } from './agent-client.js';
import { awaitWatchedWait, followWatch, listWatchPods, podKey as keyOf } from './pod-watch.js';
import { SettleHolds } from './settle-holds.js';

export interface WaitedPod {
  ns: string;
  name: string;
}

export interface PodWaitOptions {
  target: WaitTarget;
  timeoutMs: number;
  /** How the timeout is shown (e.g. `60s`). */
  timeoutText: string;
  progressEveryMs?: number;
  /** Told of each pod as it meets the target (`podvisor wait` prints `pod/NAME condition met`). */
  onMet?: (name: string) => void;
  /** Told of every state of a waited pod the watch brings, in order. */
  onUpdate?: (pod: Pod) => void;
  /** Ends the wait early (run --exit-code-from: the exit pod has ended): each pod is judged by what it has reached. */
  cut?: WaitCut;
}

/** Ends a wait before its objects have decided; `by` names what ended it (`pod/test`). */
export interface WaitCut {
  signal: AbortSignal;
  by: string;
}

/** The last log lines of the container instance a summary names, through the pods/log API. */
export function logReader(root: string) {
  return async (pod: Pod, cs: ContainerStatus): Promise<string[]> => {
    const previous = !cs.state?.terminated && !!cs.lastState?.terminated;
    const path =
      `/api/v1/namespaces/${encodeURIComponent(pod.metadata?.namespace ?? 'default')}/pods/${encodeURIComponent(pod.metadata?.name ?? '')}/log` +
      `?container=${encodeURIComponent(cs.name)}&tailLines=${summaryLogLines}${previous ? '&previous=true' : ''}`;
    const r = await agentRequest(root, 'GET', path);
    if (r.status !== 200) return [];
    return r.body
      .replace(/\n$/, '')
      .split('\n')
      .filter((l, i, all) => l !== '' || i < all.length - 1);
  };
}

/**
 * Waits until every pod meets the target, one fails for good, or the timeout passes. Prints a
 * progress line every progressEveryMs to stderr, and on failure the summary of the failed pods. Resolves to the exit code.
 */
export async function waitForPods(root: string, pods: readonly WaitedPod[], opts: PodWaitOptions, io: CommandIO): Promise<number> {
  if (pods.length === 0) return 0;
  const decide = podWait(opts.target);
  const latest = new Map<string, Pod>();
  const eventsOf = new Map<string, WaitEvent[]>();
  const pending = new Set(pods.map((p) => keyOf(p.ns, p.name)));
  const failed = new Map<string, { pod: Pod; error: string }>();
  const holds = new SettleHolds(() => settleAll());
  const stop = new AbortController();
  let over = false;
  let resolveFinished!: () => void;
  const finished = new Promise<void>((r) => (resolveFinished = r));
  const finish = () => {
    over = true;
    resolveFinished();
  };
  let initialDone = false;

  const judge = (key: string) => {
    if (over || !pending.has(key)) return;
    const pod = latest.get(key);
    if (!pod) {
      if (opts.target.kind === 'delete' && initialDone) {
        pending.delete(key);
        opts.onMet?.(key.split('/')[1]!);
      }
      return;
    }
    const d = decide(pod, eventsOf.get(pod.metadata?.uid ?? '') ?? []);
    if (d === 'wait') {
      holds.drop(key);
      return;
    }
    // Held long enough by the same container instances?
    if (d === 'done' && !holds.held(key, instancesKey(pod.status), settleMsOf(opts.target, pod), heldSinceMs(pod.status))) return;
    pending.delete(key);
    if (d === 'done') opts.onMet?.(pod.metadata?.name ?? '');
    else failed.set(key, { pod, error: d.fail });
  };
  const gone = (key: string, pod: Pod) => {
    latest.delete(key);
    if (opts.target.kind !== 'delete') {
      pending.delete(key);
      failed.set(key, { pod, error: 'deleted while waiting' });
    }
  };
  const settleAll = () => {
    for (const k of [...pending]) judge(k);
    if (pending.size === 0 || failed.size > 0) finish();
  };

  // One list, then the changes from its resourceVersion: a pod to delete that is not listed is already gone.
  const podWatch = listWatchPods(
    root,
    {
      onList: (items) => {
        const present = new Map(items.map((p) => [keyOf(p.metadata?.namespace, p.metadata?.name), p]));
        for (const k of [...pending]) {
          const pod = present.get(k);
          if (pod) {
            latest.set(k, pod);
            opts.onUpdate?.(pod);
          } else if (latest.has(k)) gone(k, latest.get(k)!);
        }
        initialDone = true;
        for (const k of [...pending]) if (!latest.has(k)) judge(k);
        settleAll();
      },
      onChange: (type, pod) => {
        const key = keyOf(pod.metadata?.namespace, pod.metadata?.name);
        if (!pending.has(key)) return;
        if (type === 'DELETED') gone(key, pod);
        else {
          latest.set(key, pod);
          opts.onUpdate?.(pod);
        }
        settleAll();
      },
    },
    stop.signal,
  );
  const eventWatch = followWatch<Event>(
    root,
    '/api/v1/events?watch=1',
    (l) => {
      const uid = l.object.involvedObject?.uid;
      if (!uid || l.type === 'DELETED' || !explainsWait(l.object)) return;
      const list = eventsOf.get(uid) ?? [];
      if (list.push(l.object) > 20) list.shift();
      eventsOf.set(uid, list);
      settleAll();
    },
    stop.signal,
  );
  const width = Math.max(40, (io.stderr as { columns?: number }).columns ?? progressWidth);
  const progress = setInterval(() => {
    const waiting = [...pending].map((k) => {
      const pod = latest.get(k);
      // A pod in its settle hold has met the target: the line says so, not what it had before.
      const holding =
        pod && holds.holding(k) ? `${targetText(opts.target, pod)}, checking that it holds for ${settleMsOf(opts.target, pod) / 1000}s` : undefined;
      return `${k.split('/')[1]} (${holding ?? (pod ? pendingText(pod, opts.target) : 'not found')})`;
    });
    io.stderr.write(
      `${oneTerminalLine(`waiting for ${waiting.length} pod${waiting.length === 1 ? '' : 's'} to be ${targetText(opts.target)}: ${waiting.join(', ')}`, width)}\n`,
    );
  }, opts.progressEveryMs ?? 5000);
  let cutShort = false;
  const onCut = () => {
    cutShort = true;
    finish();
  };
  if (opts.cut?.signal.aborted) onCut();
  else opts.cut?.signal.addEventListener('abort', onCut, { once: true });
  const end = await awaitWatchedWait({ finished, finish, watches: [podWatch, eventWatch], timeoutMs: opts.timeoutMs, signal: io.signal, progress, stop });
  opts.cut?.signal.removeEventListener('abort', onCut);
  if (end === 'met' && cutShort) {
    for (const k of pending) {
      const pod = latest.get(k);
      const d = pod ? decide(pod, eventsOf.get(pod.metadata?.uid ?? '') ?? []) : 'wait';
      if (d === 'done') opts.onMet?.(pod?.metadata?.name ?? '');
      else
        failed.set(k, {
          pod: pod ?? { metadata: { name: k.split('/')[1]!, namespace: k.split('/')[0]! } },
          error: typeof d === 'object' ? d.fail : `${pod ? pendingText(pod, opts.target) : 'not found'} when ${opts.cut!.by} ended`,
        });
    }
  }
  if (typeof end === 'object') {
    io.stderr.write(`error: ${end.error.message}\n`);
    return 1;
  }
  if (end === 'aborted') return 130;
  if (end === 'timed-out') {
    for (const k of pending) {
      const pod = latest.get(k);
      failed.set(k, {
        pod: pod ?? { metadata: { name: k.split('/')[1]!, namespace: k.split('/')[0]! } },
        error: `timed out after ${opts.timeoutText} waiting to be ${targetText(opts.target, pod)}${pod ? `: ${pendingText(pod, opts.target)}` : ''}`,
      });
    }
  }
  if (failed.size === 0) return 0;
  const summary = await formatRunSummary(
    [...failed.values()].map((f) => {
      const warning = (eventsOf.get(f.pod.metadata?.uid ?? '') ?? []).at(-1);
      const last = warning ? ` (last warning: ${warning.reason}: ${(warning.message ?? '').trim().split('\n')[0]})` : '';
      return { pod: f.pod, ok: false, error: `${f.error}${last}` };
    }),
    targetText(opts.target),
    logReader(root),
  );
  // The headline counts only failed pods here: the others were reported as they met the condition.
  io.stderr.write(summary.replace(/^\d+ of \d+ pods? failed:\n/, ''));
  return 1;
}
