// The agent's pods as a reflector follows them (client-go's ListWatch): one list, then a watch from
// the list's resourceVersion, so a command that waits costs one list and a stream of changes however
// many pods there are and however long it waits; a watch the agent ends or expires lists again.

import type { Pod } from '../api/types.js';
import { setLongTimeout } from '../util/timer.js';
import { agentGone, agentRequest, agentStream, replyMessage } from './agent-client.js';

export interface WatchLine<T> {
  type: string;
  object: T;
}

/** A pod by namespace and name; with uid, only that pod (a new one of the same name is another). */
export interface PodRef {
  ns: string;
  name: string;
  uid?: string;
}

export const podKey = (ns: string | undefined, name: string | undefined) => `${ns ?? 'default'}/${name ?? ''}`;
const keyOfPod = (p: Pod) => podKey(p.metadata?.namespace, p.metadata?.name);

/** Follows an NDJSON watch of path until signal aborts; resolves when the stream ends. */
export async function followWatch<T>(root: string, path: string, onLine: (l: WatchLine<T>) => void, signal: AbortSignal): Promise<void> {
  const res = await agentStream(root, 'GET', path);
  const stop = () => res.destroy();
  if (signal.aborted) {
    stop();
    return;
  }
  signal.addEventListener('abort', stop, { once: true });
  let buffered = '';
  try {
    for await (const chunk of res) {
      buffered += (chunk as Buffer).toString('utf8');
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line) onLine(JSON.parse(line) as WatchLine<T>);
      }
    }
  } catch (err) {
    if (!signal.aborted) throw agentGone(root, err);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

export interface PodListWatchHandler {
  /** Every pod as listed: first, and again after a watch that ended. */
  onList(pods: readonly Pod[]): void;
  /** ADDED, MODIFIED or DELETED, in the order the agent made them. */
  onChange(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod): void;
}

/** Lists the pods, then watches from the list's resourceVersion, until signal aborts. */
export async function listWatchPods(root: string, handler: PodListWatchHandler, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const r = await agentRequest(root, 'GET', '/api/v1/pods');
    if (r.status !== 200) throw new Error(`listing pods: ${replyMessage(r).message}`);
    const list = r.json<{ metadata?: { resourceVersion?: string }; items: Pod[] }>();
    if (signal.aborted) return;
    handler.onList(list.items);
    const round = new AbortController();
    const abortRound = () => round.abort();
    signal.addEventListener('abort', abortRound, { once: true });
    try {
      await followWatch<Pod>(
        root,
        `/api/v1/pods?watch=1&resourceVersion=${encodeURIComponent(list.metadata?.resourceVersion ?? '')}`,
        (l) => {
          if (round.signal.aborted) return;
          // 410 Expired or any refusal: the watch ends here and the pods are listed again.
          if (l.type === 'ERROR') round.abort();
          else if (l.type === 'ADDED' || l.type === 'MODIFIED' || l.type === 'DELETED') handler.onChange(l.type, l.object);
        },
        round.signal,
      );
    } finally {
      signal.removeEventListener('abort', abortRound);
    }
  }
}

export interface GoneWaitOptions {
  /** Infinity: no limit. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Told of each pod as it goes. */
  onGone?: (pod: PodRef) => void;
}

/**
 * Waits until every pod is gone (deleted, or replaced by a pod of another uid) from one list and a
 * watch; resolves to those still there when the timeout passed or the signal aborted.
 */
export async function waitPodsGone(root: string, pods: readonly PodRef[], opts: GoneWaitOptions): Promise<PodRef[]> {
  const left = new Map(pods.map((p) => [podKey(p.ns, p.name), p]));
  if (left.size === 0) return [];
  const stop = new AbortController();
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  const gone = (key: string) => {
    const p = left.get(key);
    if (!p) return;
    left.delete(key);
    opts.onGone?.(p);
    if (left.size === 0) finish();
  };
  const other = (p: PodRef, pod: Pod) => p.uid !== undefined && pod.metadata?.uid !== p.uid;
  const watching = listWatchPods(
    root,
    {
      onList: (items) => {
        const present = new Map(items.map((pod) => [keyOfPod(pod), pod]));
        for (const [key, p] of [...left]) {
          const pod = present.get(key);
          if (!pod || other(p, pod)) gone(key);
        }
      },
      onChange: (type, pod) => {
        const key = keyOfPod(pod);
        const p = left.get(key);
        if (p && (type === 'DELETED' ? !other(p, pod) : other(p, pod))) gone(key);
      },
    },
    stop.signal,
  );
  const timer = setLongTimeout(finish, opts.timeoutMs);
  opts.signal?.addEventListener('abort', finish, { once: true });
  const broken = watching.then(
    () => undefined,
    (err: Error) => err,
  );
  try {
    const err = await Promise.race([finished.then(() => undefined), broken]);
    if (err) throw err;
  } finally {
    timer.cancel();
    opts.signal?.removeEventListener('abort', finish);
    stop.abort();
  }
  return [...left.values()];
}

/** How a wait on watches ended: its condition met, its timeout, the command's signal, or a broken watch. */
export type WaitEnd = 'met' | 'timed-out' | 'aborted' | { error: Error };

/**
 * Waits until finished resolves (finish() is called when the condition is met, the timeout passes
 * or signal aborts) or a watch breaks; then stops the progress line, the timer and the watches.
 */
export async function awaitWatchedWait(opts: {
  finished: Promise<void>;
  finish: () => void;
  watches: Promise<unknown>[];
  timeoutMs: number;
  signal?: AbortSignal;
  progress: ReturnType<typeof setInterval>;
  stop: AbortController;
}): Promise<WaitEnd> {
  let timedOut = false;
  const timer = setLongTimeout(() => {
    timedOut = true;
    opts.finish();
  }, opts.timeoutMs);
  const onAbort = () => opts.finish();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const broken = Promise.all(opts.watches).then(
    () => undefined,
    (err: Error) => err,
  );
  const err = await Promise.race([opts.finished.then(() => undefined), broken]);
  clearInterval(opts.progress);
  timer.cancel();
  opts.signal?.removeEventListener('abort', onAbort);
  opts.stop.abort();
  if (err) return { error: err };
  if (opts.signal?.aborted) return 'aborted';
  return timedOut ? 'timed-out' : 'met';
}
