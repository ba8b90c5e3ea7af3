// `podvisor run`: the kubelet's run-once mode for CI — admit and start the pods, wait until each
// runs (or is ready, or has completed), print them as `kubectl get pods` does with a summary of
// what failed, stop them gracefully, and exit 0 only when every pod made it.

import { defineCommand, usageFailure, UsageError, type Command, type CommandIO, type ParsedArgs } from './args.js';
import { runOnce, type WaitFor } from '../lifecycle/runonce.js';
import { formatPodTable } from './printers/pods.js';
import { formatObject, toV1List } from './printers/list.js';
import { formatRunSummary, summaryLogLines } from './printers/summary.js';
import { manifestFlags } from './validate.js';
import {
  agentFlagSpecs,
  agentSettings,
  loadAndCreateAgent,
  durationFlag,
  parseGoDuration,
  podWithStatus,
  stampCreation,
  takeHiddenFlag,
  watchShutdownSignals,
  type Agent,
} from './agent.js';

const waitModes: WaitFor[] = ['running', 'ready', 'completed'];
const outputModes = ['table', 'wide', 'json', 'yaml'] as const;
type RunOutput = (typeof outputModes)[number];

function isTerminal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

const waitedForText: Record<WaitFor, string> = { running: 'running', ready: 'ready', completed: 'succeeded' };

/** Test knob: the first run-once retry delay (the kubelet's 1 s), kept out of `--help`. */
const retryDelayFlag = 'retry-delay';

/** The command with its visible flags; retryDelayMs is the hidden knob's value. */
function runDefinition(retryDelayMs?: number) {
  return defineCommand({
    name: 'run',
    summary: 'Run pods once (the kubelet run-once mode): start, wait, report, stop',
    usage: 'podvisor run -f FILENAME... [--wait=running|ready|completed] [--timeout=DURATION] [-o table|wide|json|yaml] [flags]',
    description:
      'Admit the pods in order (rejecting those that do not fit), start the admitted ones together and\n' +
      'wait for each: until every container runs (--wait=running, the kubelet\'s run-once rule), until it\n' +
      'is Ready (--wait=ready), or until it has finished (--wait=completed). Pods are re-checked after\n' +
      '1s, 2s, 4s, … up to 10 retries, or until --timeout. Then print the pods and a summary of what\n' +
      'failed, with the last log lines of failed containers, and stop running pods gracefully.\n\n' +
      'Exit status: 0 when every pod reached the condition (for completed: Succeeded), 1 when any pod\n' +
      'failed or was rejected, 2 for invalid input.',
    examples: [
      'podvisor run -f ci/services.yaml',
      'podvisor run -f ci/ --wait=ready --timeout=2m',
      'podvisor run -f job.yaml --wait=completed -o json',
    ],
    flags: [
      ...manifestFlags,
      { name: 'wait', type: 'string', values: waitModes, default: 'running', usage: 'What to wait for in each pod.' },
      { name: 'timeout', type: 'string', valueName: 'DURATION', usage: 'Give up waiting after this long (e.g. 30s, 2m, 1m30s); unset: only the retry schedule bounds the wait.' },
      { name: 'output', short: 'o', type: 'string', values: [...outputModes], default: 'table', usage: 'Output format of the pods.' },
      ...agentFlagSpecs,
    ],
    run: (parsed, io) => runPods(parsed, io, retryDelayMs),
  });
}

async function runPods(parsed: ParsedArgs, io: CommandIO, retryDelayMs: number | undefined): Promise<number> {
  const files = parsed.flags.filename as string[];
  if (files.length === 0) return usageFailure(io, 'must specify one of -f and -k', 'run');
  const wait = parsed.flags.wait as WaitFor;
  const output = parsed.flags.output as RunOutput;
  let settings: ReturnType<typeof agentSettings>;
  let timeoutMs: number | undefined;
  try {
    settings = agentSettings(parsed, io);
    timeoutMs = durationFlag(parsed, 'timeout');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'run');
    throw err;
  }

  const started = await loadAndCreateAgent(files, parsed, io, settings);
  if (typeof started === 'number') return started;
  const { agent, loaded } = started;

  const interrupted = new AbortController();
  const unwatch = watchShutdownSignals(io, {
    first: () => interrupted.abort(),
    // The process exits right after this: nothing of the pods may outlive it.
    again: () => agent.killAllSync(),
  });
  try {
    const { kubelet, clock } = agent;
    stampCreation(loaded.pods, clock.now());
    const report = await runOnce(kubelet, loaded.pods, {
      wait,
      clock,
      ...(retryDelayMs !== undefined ? { retryDelayMs } : {}),
      ...(timeoutMs ? { timeoutMs, timeoutText: String(parsed.flags.timeout) } : {}),
      signal: interrupted.signal,
    });

    const resultByUid = new Map(report.results.map((r) => [r.pod.metadata?.uid ?? '', r]));
    const pods = kubelet.pods().map((p) => podWithStatus(p, kubelet.getPodStatus(p.metadata?.uid ?? '')));
    const summary = await formatRunSummary(
      pods.map((pod) => {
        const r = resultByUid.get(pod.metadata?.uid ?? '');
        return { pod, ok: r?.ok ?? false, ...(r?.error ? { error: r.error } : {}) };
      }),
      waitedForText[wait],
      (pod, cs, id) => agent.readLogTail(pod, cs, id, summaryLogLines),
    );
    if (output === 'json' || output === 'yaml') {
      io.stdout.write(formatObject(toV1List(pods), output));
      io.stderr.write(summary);
    } else {
      io.stdout.write(formatPodTable(pods, { wide: output === 'wide', now: clock.now() }));
      io.stdout.write(`\n${summary}`);
    }

    const running = pods.filter((p) => !resultByUid.get(p.metadata?.uid ?? '')?.rejected && !isTerminal(p.status?.phase));
    if (running.length > 0) {
      io.stderr.write(`stopping ${running.length} pod${running.length === 1 ? '' : 's'} gracefully\n`);
      await kubelet.terminateAll();
      io.stderr.write('all pods stopped\n');
    } else {
      await kubelet.terminateAll();
    }
    return report.results.every((r) => r.ok) ? 0 : 1;
  } finally {
    unwatch();
    await agent.close();
  }
}

const visible = runDefinition();

/** `podvisor run`; the hidden `--retry-delay=DURATION` is taken out before the visible flags are parsed. */
export const runCommand: Command = {
  name: visible.name,
  summary: visible.summary,
  async run(argv, io) {
    const { argv: rest, value } = takeHiddenFlag(argv, retryDelayFlag);
    if (value === undefined) return visible.run(rest, io);
    let retryDelayMs: number;
    try {
      retryDelayMs = parseGoDuration(value);
      if (retryDelayMs <= 0) throw new Error('must be greater than 0');
    } catch (err) {
      return usageFailure(io, `invalid argument "${value}" for "--${retryDelayFlag}" flag: ${(err as Error).message}`, 'run');
    }
    return runDefinition(retryDelayMs).run(rest, io);
  },
};
