// `podvisor up`: foreground supervision. Start the pods and keep them going, stream their events
// (and, with --logs, their output) as they happen, and on SIGINT/SIGTERM or when --for elapses stop
// them gracefully; with -o print one v1 List of the Pods as they were and every Event recorded.

import type { Event, Pod } from '../api/types.js';
import { formatEventTable } from '../events/format.js';
import { LABEL_CONTAINER_NAME, LABEL_POD_NAME } from '../lifecycle/container-config.js';
import type { LogStream } from '../runtime/logs/cri-format.js';
import { defineCommand, usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import {
  agentFlagSpecs,
  agentSettings,
  loadAndCreateAgent,
  durationFlag,
  podWithStatus,
  stampCreation,
  watchShutdownSignals,
  type Agent,
} from './agent.js';
import { formatObject, toV1List, type ObjectFormat } from './printers/list.js';
import { manifestFlags } from './validate.js';
import { detachFlags, upDetached } from './up-detached.js';

export const upCommand = defineCommand({
  name: 'up',
  summary: 'Run pods in the foreground until interrupted, streaming their events',
  usage: 'podvisor up -f FILENAME... [--for=DURATION] [--logs] [-o json|yaml] [flags]\n  podvisor up -d -f FILENAME... [--wait=running|ready|completed] [--timeout=DURATION] [flags]',
  description:
    'Admit and start the pods and keep them going (restarts, back-off, probes), printing their events\n' +
    'to stderr as `kubectl get events --watch` does. On SIGINT or SIGTERM, or once --for has elapsed,\n' +
    'every pod is stopped gracefully; a second SIGINT kills them at once. With -o json|yaml, one v1\n' +
    'List is then printed to stdout: the Pods with their status as it was just before stopping\n' +
    'began, followed by every Event recorded during the run.',
  examples: ['podvisor up -f examples/web.yaml', 'podvisor up -f ci/ --for=30s -o json > run.json', 'podvisor up -f app.yaml --logs'],
  flags: [
    ...manifestFlags,
    { name: 'for', type: 'string', valueName: 'DURATION', usage: 'Stop the pods after this long (e.g. 30s, 5m); unset: until interrupted.' },
    { name: 'logs', type: 'boolean', usage: 'Also print container output, each line prefixed "pod/container | " (to stderr with -o).' },
    { name: 'output', short: 'o', type: 'string', values: ['json', 'yaml'], usage: 'After stopping, print the Pods and Events as one v1 List.' },
    ...detachFlags,
    ...agentFlagSpecs,
  ],
  run: (parsed, io) => (parsed.flags.detach === true ? upDetached(parsed, io) : upPods(parsed, io)),
});

/** Container output with `pod/container | ` prefixes, in the order each container wrote it. */
function streamContainerOutput(agent: Agent, out: NodeJS.WritableStream): () => void {
  const names = new Map<string, Promise<string | undefined>>();
  const queues = new Map<string, Promise<void>>();
  const nameOf = (id: string) => {
    let n = names.get(id);
    if (!n) {
      n = agent.runtime.containerStatus(id).then(
        (s) => `${s.labels[LABEL_POD_NAME] ?? ''}/${s.labels[LABEL_CONTAINER_NAME] ?? s.metadata.name}`,
        () => undefined,
      );
      names.set(id, n);
    }
    return n;
  };
  return agent.runtime.onContainerOutput((id: string, _stream: LogStream, line: string) => {
    // The name lookup is asynchronous; chaining per container keeps its lines in order.
    const prev = queues.get(id) ?? Promise.resolve();
    const next = prev.then(async () => {
      const name = await nameOf(id);
      if (name) out.write(`${name} | ${line}\n`);
    });
    queues.set(id, next);
  });
}

/** Events to stderr as a watch prints them: the header with the first, then one line each. */
function streamEvents(agent: Agent, err: NodeJS.WritableStream): () => void {
  let headerDone = false;
  return agent.kubelet.events.onEvent((ev: Event) => {
    err.write(formatEventTable([ev], agent.clock.now(), { noHeaders: headerDone }));
    headerDone = true;
  });
}

async function upPods(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  if (files.length === 0) return usageFailure(io, 'must specify one of -f and -k', 'up');
  const output = parsed.flags.output as ObjectFormat | undefined;
  let settings: ReturnType<typeof agentSettings>;
  let forMs: number | undefined;
  try {
    settings = agentSettings(parsed, io);
    forMs = durationFlag(parsed, 'for');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'up');
    throw err;
  }

  const started = await loadAndCreateAgent(files, parsed, io, settings, 'up');
  if (typeof started === 'number') return started;
  const { agent, loaded } = started;
  const { kubelet, clock } = agent;
  const unsubscribe = [streamEvents(agent, io.stderr)];
  if (parsed.flags.logs === true) unsubscribe.push(streamContainerOutput(agent, output ? io.stderr : io.stdout));

  // The statuses as they were when stopping began, and whether the List went out already.
  let snapshot: Pod[] | undefined;
  let listWritten = false;
  const takeSnapshot = () => {
    snapshot ??= kubelet.pods().map((p) => structuredClone(podWithStatus(p, kubelet.getPodStatus(p.metadata?.uid ?? ''))));
    return snapshot;
  };
  const writeList = () => {
    if (!output || listWritten) return;
    listWritten = true;
    io.stdout.write(formatObject(toV1List([...takeSnapshot(), ...kubelet.events.list()]), output));
  };

  let stop!: (why: string) => void;
  const stopRequested = new Promise<string>((resolve) => (stop = resolve));
  const unwatch = watchShutdownSignals(io, {
    first: (sig) => stop(sig),
    again: (sig) => {
      // The entry point exits the process right after this returns: kill now, print what we have.
      takeSnapshot();
      io.stderr.write(`${sig} again: killing all pods at once\n`);
      void kubelet.terminateAll({ gracePeriodSeconds: 0 }).catch(() => {});
      agent.runtime.killAllSync();
      writeList();
    },
  });
  const forTimer = forMs !== undefined ? clock.setTimer(forMs, () => stop(`--for=${String(parsed.flags.for)} elapsed`)) : undefined;

  let code = 0;
  try {
    stampCreation(loaded.pods, clock.now());
    for (const pod of loaded.pods) {
      const admit = kubelet.admit(pod);
      if (admit.admit) {
        kubelet.startPod(pod);
        continue;
      }
      const reason = admit.reason ?? 'UnknownReason';
      kubelet.rejectPod(pod, reason, admit.message ?? '');
      io.stderr.write(`pod/${pod.metadata?.name} rejected: ${reason}: ${admit.message ?? ''}\n`);
    }

    const why = await stopRequested;
    takeSnapshot();
    const running = kubelet.pods().filter((p) => {
      const phase = kubelet.getPodStatus(p.metadata?.uid ?? '')?.phase;
      return phase !== 'Succeeded' && phase !== 'Failed';
    });
    io.stderr.write(`${why}: stopping ${running.length} pod${running.length === 1 ? '' : 's'} gracefully\n`);
    try {
      const grace = parsed.flags['grace-period'] as number | undefined;
      await kubelet.terminateAll(grace !== undefined ? { gracePeriodSeconds: Math.max(0, grace) } : {});
      io.stderr.write('all pods stopped\n');
    } catch (err) {
      io.stderr.write(`error: stopping pods: ${(err as Error).message}\n`);
      code = 1;
    }
    writeList();
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    code = 1;
  } finally {
    forTimer?.cancel();
    unwatch();
    for (const u of unsubscribe) u();
    await agent.close().catch((err: Error) => {
      io.stderr.write(`error: ${err.message}\n`);
      code = 1;
    });
  }
  return code;
}
