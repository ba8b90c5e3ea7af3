// `podvisor up`: foreground supervision. Start the pods and keep them going, stream their events and
// a line per pod state change (and, with --logs, their output) as they happen, and on SIGINT/SIGTERM,
// when --for elapses, or once every pod has finished for good, stop them gracefully and print the pod
// table; with -o print one v1 List of the Pods as they were and every Event recorded.

import type { Event, Pod } from '../api/types.js';
import { EventStreamFormatter } from '../printers/events.js';
import { streamContainerOutput } from './container-output.js';
import { defineCommand, usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import { agentFlagSpecs, agentSettings, durationFlag } from './agent-flags.js';
import { loadForAgent, needsAgentAPI, podWithStatus, startAgentFor } from './in-process.js';
import { watchShutdownSignals } from './signals.js';
import { notifySystemd } from '../agent/systemd-notify.js';
import { stampCreation, startAdmitted, type InProcessAgent } from '../agent/in-process.js';
import { formatObject, toV1List, type ObjectFormat } from '../printers/json-yaml.js';
import { formatPodTable, podRow } from '../printers/tables.js';
import { manifestFlags, noFilenameMessage } from './validate.js';
import { detachFlags, upDetached } from './up-detached.js';

export const upCommand = defineCommand({
  name: 'up',
  summary: 'Run pods in the foreground until interrupted, streaming their events',
  usage:
    'podvisor up -f FILENAME... [--for=DURATION] [--logs] [-o json|yaml] [flags]\n  podvisor up -d -f FILENAME... [--wait=running|ready|completed|auto] [--timeout=DURATION] [--port N] [flags]',
  description:
    'Admit and start the pods and keep them going (restarts, back-off, probes), printing to stderr\n' +
    "their events as `kubectl get events --watch` does and a line for each change of a pod's status,\n" +
    'ready containers or restarts. On SIGINT or SIGTERM, once --for has elapsed, or when every pod has\n' +
    'finished for good (all pods have restartPolicy Never or OnFailure and are Succeeded or Failed),\n' +
    'every pod is stopped gracefully and the pod table is printed to stderr; a second SIGINT kills them\n' +
    'at once. With -o json|yaml, one v1 List is then printed to stdout: the Pods with their status as it\n' +
    'was just before stopping began, followed by every Event recorded during the run.\n\n' +
    'Services and workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs) run\n' +
    'through the agent of the root dir (started for the run when none serves it, stopped after), whose\n' +
    'controllers make their pods: a state line per change of each workload as well as per pod; the run\n' +
    'ends by itself when it holds only Jobs and pods meant to finish and all have; what was applied\n' +
    'is deleted when it stops.\n\n' +
    'Exit status: 0, or 1 when a pod or a Job failed (phase Failed) or was rejected, 2 for invalid input.',
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

/** Events to stderr as a watch prints them: the header with the first, then one aligned line each. */
function streamEvents(agent: InProcessAgent, err: NodeJS.WritableStream, pods: readonly Pod[]): () => void {
  const table = new EventStreamFormatter(pods.map((p) => `pod/${p.metadata?.name ?? ''}`));
  return agent.kubelet.events.onEvent((ev: Event) => {
    err.write(table.format(ev, agent.clock.now()));
  });
}

/** A line on stderr whenever a pod's STATUS, READY or RESTARTS (as `kubectl get pods` shows them) changes. */
function streamPodStates(agent: InProcessAgent, err: NodeJS.WritableStream): () => void {
  const last = new Map<string, string>();
  const announced = new Set<string>();
  return agent.kubelet.onPodStatus((pod, status) => {
    const [name, ready, phase, restarts] = podRow(podWithStatus(pod, status), { now: agent.clock.now() });
    const count = restarts!.split(' ')[0];
    const line = `pod/${name}: ${phase || 'Pending'}, ready ${ready}, restarts ${count}`;
    const uid = pod.metadata?.uid ?? '';
    if (last.get(uid) === line) return;
    last.set(uid, line);
    err.write(`${line}\n`);
    // The first time a pod is Ready, where to reach it.
    const podReady = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    if (!podReady || announced.has(uid)) return;
    announced.add(uid);
    const ports = (pod.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
    if (ports.length && status.podIP) err.write(`pod/${name} is ready at ${ports.map((p) => `${status.podIP}:${p}`).join(', ')}\n`);
  });
}

/** True once every pod has finished for good: Succeeded or Failed (rejected pods are Failed; a pod that restarts for ever never is). */
function allFinished(kubelet: InProcessAgent['kubelet']): boolean {
  const pods = kubelet.pods();
  return (
    pods.length > 0 &&
    pods.every((p) => {
      const phase = kubelet.getPodStatus(p.metadata?.uid ?? '')?.phase;
      return phase === 'Succeeded' || phase === 'Failed';
    })
  );
}

async function upPods(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  if (files.length === 0) return usageFailure(io, noFilenameMessage, 'up');
  const output = parsed.flags.output as ObjectFormat | undefined;
  await (await import('./runtime-choice.js')).chooseRuntimeFor(files, parsed, io);
  let settings: ReturnType<typeof agentSettings>;
  let forMs: number | undefined;
  try {
    settings = agentSettings(parsed, io);
    forMs = durationFlag(parsed, 'for');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'up');
    throw err;
  }

  const manifests = await loadForAgent(files, parsed, io, settings);
  if (typeof manifests === 'number') return manifests;
  if (needsAgentAPI(manifests)) {
    // Services and workloads need the agent's API and controllers: the agent of the root dir runs them.
    const { upThroughAgent } = await import('./up-workloads.js');
    return upThroughAgent(parsed, io, manifests, settings.rootDir, forMs);
  }
  const started = await startAgentFor(manifests, io, settings, 'up');
  if (typeof started === 'number') return started;
  const { agent, loaded } = started;
  const { kubelet, clock } = agent;
  const unsubscribe = [streamEvents(agent, io.stderr, loaded.pods), streamPodStates(agent, io.stderr)];
  unsubscribe.push(
    notifySystemd(io.env.NOTIFY_SOCKET, loaded.pods, () => kubelet.pods().map((p) => podWithStatus(p, kubelet.getPodStatus(p.metadata?.uid ?? ''))), clock),
  );
  const containerOutput = parsed.flags.logs === true ? streamContainerOutput(agent, output ? io.stderr : io.stdout) : undefined;
  if (containerOutput) unsubscribe.push(() => containerOutput.stop());

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
      agent.killAllSync();
      writeList();
    },
  });
  const forTimer = forMs !== undefined ? clock.setTimer(forMs, () => stop(`--for=${String(parsed.flags.for)} elapsed`)) : undefined;

  let code = 0;
  try {
    stampCreation(loaded.pods, clock.now());
    startAdmitted(kubelet, loaded.pods, (r) => io.stderr.write(`pod/${r.pod.metadata?.name} rejected: ${r.reason}: ${r.message}\n`));

    // Pods meant to finish end the run once they all have (a pod that restarts for ever never does).
    const checkFinished = () => {
      if (allFinished(kubelet)) stop('every pod has finished');
    };
    unsubscribe.push(kubelet.onPodStatus(checkFinished));
    checkFinished();

    const why = await stopRequested;
    takeSnapshot();
    // What the containers wrote before the stop comes before the words about it.
    await containerOutput?.drain();
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
    await containerOutput?.drain();
    const final = takeSnapshot();
    // The table shows the pods as they are now, stopped; the exit code and -o keep the state before stopping.
    const stopped = kubelet.pods().map((p) => podWithStatus(p, kubelet.getPodStatus(p.metadata?.uid ?? '')));
    io.stderr.write(`\n${formatPodTable(stopped, { now: clock.now() })}`);
    if (final.some((p) => p.status?.phase === 'Failed')) code = 1;
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
