// Container output on the command line, compose's way: each line prefixed `pod/container | `, in the
// order each container wrote it (`up --logs`, `run --logs`).

import { LABEL_CONTAINER_NAME, LABEL_POD_NAME } from '../kuberuntime/container-config.js';
import type { LogStream } from '../runtime/logs/cri-format.js';
import type { InProcessAgent } from '../agent/in-process.js';
import { BoundedWriter } from './bounded-writer.js';

/** Streams container output; drain() prints what the containers wrote so far (before a final table), stop() ends. */
export interface ContainerOutputStream {
  drain(): Promise<void>;
  stop(): void;
}

/** Container output with `pod/container | ` prefixes, in the order each container wrote it. */
export function streamContainerOutput(agent: InProcessAgent, out: NodeJS.WritableStream): ContainerOutputStream {
  // A slow reader gets dropped lines and a count, never a growing agent.
  const writer = new BoundedWriter(out);
  const names = new Map<string, string | undefined>();
  /** Lines of a container whose name is still being looked up (a few at most: the lookup is in memory). */
  const early = new Map<string, string[]>();
  const lookups = new Set<Promise<void>>();
  const nameOf = (id: string) => {
    if (names.has(id) || early.has(id)) return;
    early.set(id, []);
    const lookup = agent.runtime
      .containerStatus(id)
      .then(
        (s) => `${s.labels[LABEL_POD_NAME] ?? ''}/${s.labels[LABEL_CONTAINER_NAME] ?? s.metadata.name}`,
        () => undefined,
      )
      .then((name) => {
        names.set(id, name);
        const lines = early.get(id) ?? [];
        early.delete(id);
        if (name) for (const line of lines) writer.write(`${name} | ${line}\n`);
      })
      .finally(() => lookups.delete(lookup));
    lookups.add(lookup);
  };
  const follow = agent.onContainerOutput((id: string, _stream: LogStream, line: string) => {
    nameOf(id);
    const waiting = early.get(id);
    if (waiting) {
      if (waiting.length < EARLY_LINES_MAX) waiting.push(line);
      else writer.drop();
      return;
    }
    const name = names.get(id);
    if (name) writer.write(`${name} | ${line}\n`);
  });
  return {
    drain: async () => {
      await follow.drain();
      await Promise.all([...lookups]);
    },
    stop: () => {
      follow.stop();
      writer.flushNotice();
    },
  };
}

const EARLY_LINES_MAX = 1000;
