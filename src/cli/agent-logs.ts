// Container output of the agent's pods on the command line, compose's way (`run --logs` of manifests
// with workloads): every container instance of the pods a run owns, its controllers' pods included, is
// followed through the pods/log API as `kubectl logs -f` does, each line prefixed `pod/container | `.

import type { ContainerStatus, Pod } from '../api/types.js';
import { agentStream } from './agent-client.js';
import { BoundedWriter } from './bounded-writer.js';
import { listWatchPods } from './pod-watch.js';
import { setLongTimeout, type LongTimer } from '../util/timer.js';

export interface PodLogFollower {
  /** Lets the streams of containers that have ended deliver their last lines (up to graceMs), then stops every stream. */
  stop(graceMs?: number): Promise<void>;
}

interface Followed {
  abort: AbortController;
  ended: Promise<void>;
  /** The container had stopped when last seen: its stream ends by itself once its last lines are read. */
  stopped: boolean;
}

/** Streams one container instance's log until it ends (the container stopped) or abort. */
async function followOne(root: string, pod: Pod, container: string, writer: BoundedWriter, abort: AbortSignal): Promise<void> {
  const ns = encodeURIComponent(pod.metadata?.namespace ?? 'default');
  const path = `/api/v1/namespaces/${ns}/pods/${encodeURIComponent(pod.metadata?.name ?? '')}/log?container=${encodeURIComponent(container)}&follow=true`;
  const prefix = `${pod.metadata?.name ?? ''}/${container} | `;
  const res = await agentStream(root, 'GET', path);
  if (res.statusCode !== 200) {
    res.resume();
    return;
  }
  const cut = () => res.destroy();
  abort.addEventListener('abort', cut, { once: true });
  let partial = '';
  try {
    for await (const chunk of res) {
      partial += (chunk as Buffer).toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) writer.write(`${prefix}${line}\n`);
    }
  } catch {
    // cut by stop() or by the agent: what came is written
  } finally {
    abort.removeEventListener('abort', cut);
    if (partial) writer.write(`${prefix}${partial}\n`);
  }
}

/** A container instance that has started (running, or ended with output to read). */
const startedInstance = (cs: ContainerStatus) => (cs.state?.running || cs.state?.terminated ? cs.containerID : undefined);

/** Follows the output of every container of the pods isOurs accepts, from their first line, until stop(). */
export function followPodLogs(root: string, isOurs: (pod: Pod) => boolean, out: NodeJS.WritableStream): PodLogFollower {
  const writer = new BoundedWriter(out);
  const followed = new Map<string, Followed>();
  const watch = new AbortController();
  const look = (pod: Pod) => {
    if (!isOurs(pod)) return;
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    for (const cs of statuses) {
      const id = startedInstance(cs);
      const key = `${pod.metadata?.uid ?? ''}/${cs.name}/${id ?? ''}`;
      if (!id) continue;
      const known = followed.get(key);
      if (known) {
        known.stopped ||= !!cs.state?.terminated;
        continue;
      }
      const abort = new AbortController();
      const ended = followOne(root, pod, cs.name, writer, abort.signal).catch(() => undefined);
      followed.set(key, { abort, ended, stopped: !!cs.state?.terminated });
    }
  };
  const watching = listWatchPods(
    root,
    {
      onList: (pods) => pods.forEach(look),
      onChange: (type, pod) => {
        if (type !== 'DELETED') look(pod);
      },
    },
    watch.signal,
  ).catch(() => undefined);
  return {
    async stop(graceMs = 1000) {
      watch.abort();
      await watching;
      let timer: LongTimer | undefined;
      const ending = [...followed.values()].filter((f) => f.stopped).map((f) => f.ended);
      await Promise.race([Promise.all(ending), new Promise((r) => (timer = setLongTimeout(() => r(undefined), graceMs)))]);
      timer?.cancel();
      for (const f of followed.values()) f.abort.abort();
      await Promise.all([...followed.values()].map((f) => f.ended));
      writer.flushNotice();
    },
  };
}
