// `podvisor run`: the kubelet's run-once mode for CI — admit and start the pods, wait for what each
// pod means (completion, readiness or running), print them as `kubectl get pods` does with a summary
// of what failed, stop them gracefully, and exit 0 only when every pod made it.

import { defineCommand, usageFailure, UsageError, type Command, type CommandIO, type ParsedArgs } from './args.js';
import { runOnce, type PodWait, type WaitFor } from '../kubelet/runonce.js';
import { oneTerminalLine, progressWidth } from '../kubelet/wait-engine.js';
import { formatPodTable } from '../printers/tables.js';
import { formatObject, toV1List } from '../printers/json-yaml.js';
import { formatRunSummary, summaryLogLines, withLogTails, type ContainerLogReader, type PodProbeResults } from '../printers/run-summary.js';
import { manifestFlags, noFilenameMessage } from './validate.js';
import { agentFlagSpecs, agentSettings, durationFlag, parseGoDuration, takeHiddenFlag } from './agent-flags.js';
import { loadForAgent, needsAgentAPI, podWithStatus, startAgentFor } from './in-process.js';
import { watchShutdownSignals } from './signals.js';
import { streamContainerOutput } from './container-output.js';
import type { Pod } from '../api/types.js';
import { stampCreation } from '../agent/in-process.js';

const waitModes: WaitFor[] = ['auto', 'running', 'ready', 'completed'];
const defaultTimeout = '5m';
const outputModes = ['table', 'wide', 'json', 'yaml'] as const;
type RunOutput = (typeof outputModes)[number];

function isTerminal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

const waitedForText: Record<PodWait | 'finished', string> = { running: 'running', ready: 'ready', completed: 'succeeded', finished: 'finished' };

/** `running`, or for pods waited for different things `1 succeeded, 2 ready` (`finished`: --exit-code-from's container ended). */
function reachedText(waits: readonly (PodWait | 'finished' | undefined)[]): string {
  const counts = new Map<string, number>();
  for (const w of waits) if (w) counts.set(waitedForText[w], (counts.get(waitedForText[w]) ?? 0) + 1);
  if (counts.size <= 1) return [...counts.keys()][0] ?? 'running';
  return `ok: ${[...counts].map(([text, n]) => `${n} ${text}`).join(', ')}`;
}

/** Test knobs kept out of `--help`: the first run-once retry delay (the kubelet's 1 s) and the progress period. */
const retryDelayFlag = 'retry-delay';
const progressEveryFlag = 'progress-every';

interface HiddenKnobs {
  retryDelayMs?: number;
  progressEveryMs?: number;
}

/** The command with its visible flags; knobs are the hidden flags' values. */
function runDefinition(knobs: HiddenKnobs = {}) {
  return defineCommand({
    name: 'run',
    summary: 'Run pods once (the kubelet run-once mode): start, wait, report, stop',
    usage: 'podvisor run -f FILENAME... [--wait=auto|running|ready|completed] [--timeout=DURATION] [-o table|wide|json|yaml] [--junit FILE] [flags]',
    description:
      'Admit the pods in order (rejecting those that do not fit), start the admitted ones together and\n' +
      'wait for each. --wait=auto (the default) waits for what each pod means: a pod with restartPolicy\n' +
      'Never or OnFailure until it has finished (Succeeded is success), a pod with a readiness probe until\n' +
      'it is Ready, any other until its containers have run for 5s without a restart. --wait=running is\n' +
      "exactly the kubelet's run-once rule: every container running (held for 1s), re-checked after 1s,\n" +
      '2s, 4s, … up to 10 retries. --wait=ready and --wait=completed apply one condition to every pod.\n' +
      'Except under --wait=running, a pod that cannot succeed fails at once: CrashLoopBackOff, a\n' +
      'container config error, a container that cannot start, a sandbox that cannot be created. While\n' +
      'waiting, a progress line per awaited pod goes to stderr every 5s. Then print the pods and a summary of what failed, with the message, last probe results and\n' +
      'last log lines of failed containers (with --junit, also as a JUnit XML report), and stop running pods gracefully.\n' +
      'Where an agent serves the root dir (up -d started one), the pods go through it and are deleted after.\n\n' +
      'Exit status: 0 when every pod reached the condition (for completed: Succeeded), 1 when any pod\n' +
      "failed or was rejected (with --exit-code-from, that container's exit code), 2 for invalid input.",
    examples: [
      'podvisor run -f ci/services.yaml -f ci/test.yaml --exit-code-from e2e --logs',
      'podvisor run -f ci/ --wait=ready --timeout=2m',
      'podvisor run -f job.yaml --wait=completed -o json',
    ],
    flags: [
      ...manifestFlags,
      { name: 'wait', type: 'string', values: waitModes, default: 'auto', usage: 'What to wait for in each pod.' },
      {
        name: 'timeout',
        type: 'string',
        valueName: 'DURATION',
        default: defaultTimeout,
        usage: 'Give up waiting after this long (e.g. 30s, 2m, 1m30s); 0: only the retry schedule bounds the wait.',
      },
      { name: 'output', short: 'o', type: 'string', values: [...outputModes], default: 'table', usage: 'Output format of the pods.' },
      {
        name: 'junit',
        type: 'string',
        valueName: 'FILE',
        usage: "Also write a JUnit XML report (a testcase per pod, workloads' pods included, the failure report in it) to FILE.",
      },
      {
        name: 'exit-code-from',
        type: 'string',
        valueName: 'POD[/CONTAINER]',
        usage:
          "Exit with this container's exit code, as compose does. POD: wait for the pod to finish, the code of its first container; POD/CONTAINER: wait for that container to end (under restartPolicy Always its first end; under OnFailure an exit 0, or its last code once in CrashLoopBackOff), then stop the rest. Either way the other pods' waits end with it and everything is stopped. job/NAME[/CONTAINER] (or a Job's bare name): the Job's outcome, as the exit code of its Succeeded pod, else of its last Failed one.",
      },
      {
        name: 'logs',
        type: 'boolean',
        usage: 'Print every container\'s output as it comes, each line prefixed "pod/container | " (to stderr with -o json|yaml).',
      },
      ...agentFlagSpecs,
    ],
    run: (parsed, io) => runPods(parsed, io, knobs),
  });
}

async function runPods(parsed: ParsedArgs, io: CommandIO, knobs: HiddenKnobs): Promise<number> {
  const { retryDelayMs, progressEveryMs } = knobs;
  const files = parsed.flags.filename as string[];
  if (files.length === 0) return usageFailure(io, noFilenameMessage, 'run');
  const wait = parsed.flags.wait as WaitFor;
  const output = parsed.flags.output as RunOutput;
  await (await import('./runtime-choice.js')).chooseRuntimeFor(files, parsed, io);
  let settings: ReturnType<typeof agentSettings>;
  let timeoutMs: number | undefined;
  try {
    settings = agentSettings(parsed, io);
    timeoutMs = durationFlag(parsed, 'timeout');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'run');
    throw err;
  }

  const manifests = await loadForAgent(files, parsed, io, settings);
  if (typeof manifests === 'number') return manifests;
  const exitFrom = parsed.flags['exit-code-from'] === undefined ? undefined : String(parsed.flags['exit-code-from']);
  const exitTarget = exitFrom === undefined ? undefined : (await import('./exit-target.js')).resolveExitTarget(exitFrom, manifests);
  if (exitTarget && 'error' in exitTarget) return usageFailure(io, exitTarget.error, 'run');
  // Workloads need the agent's controllers; bare pods go to the agent too when one serves the root
  // dir (the services `up -d` started), as compose runs a one-off beside the project's services.
  if (needsAgentAPI(manifests) || (await (await import('./agent-client.js')).agentRunning(settings.rootDir))) {
    const { runThroughAgent } = await import('./run-workloads.js');
    return runThroughAgent(parsed, io, manifests, settings.rootDir, {
      wait: wait === 'auto' || wait === 'running' || wait === 'ready' || wait === 'completed' ? wait : 'auto',
      timeoutMs: timeoutMs ?? 300_000,
      timeoutText: String(parsed.flags.timeout),
      output,
      ...(progressEveryMs !== undefined ? { progressEveryMs } : {}),
      ...(exitTarget ? { exitTarget } : {}),
      ...(parsed.flags.logs === true ? { logsTo: output === 'json' || output === 'yaml' ? io.stderr : io.stdout } : {}),
      ...(parsed.flags.junit ? { junitFile: String(parsed.flags.junit) } : {}),
    });
  }
  const started = await startAgentFor(manifests, io, settings, 'run');
  if (typeof started === 'number') return started;
  const { agent, loaded } = started;
  const containerOutput = parsed.flags.logs === true ? streamContainerOutput(agent, output === 'json' || output === 'yaml' ? io.stderr : io.stdout) : undefined;

  const interrupted = new AbortController();
  const unwatch = watchShutdownSignals(io, {
    first: () => interrupted.abort(),
    // The process exits right after this: nothing of the pods may outlive it.
    again: () => agent.killAllSync(),
  });
  try {
    const { kubelet, clock } = agent;
    const startedAt = clock.now();
    stampCreation(loaded.pods, clock.now());
    const report = await runOnce(kubelet, loaded.pods, {
      wait,
      clock,
      ...(retryDelayMs !== undefined ? { retryDelayMs } : {}),
      ...(timeoutMs ? { timeoutMs, timeoutText: String(parsed.flags.timeout) } : {}),
      signal: interrupted.signal,
      ...(exitTarget
        ? {
            exitFrom: {
              pod: (pod: Pod) => pod.metadata?.name === exitTarget.name && (pod.metadata?.namespace ?? 'default') === exitTarget.ns,
              ...(exitTarget.container ? { container: exitTarget.container } : {}),
            },
          }
        : {}),
      events: kubelet.events,
      ...(progressEveryMs !== undefined ? { progressEveryMs } : {}),
      onProgress: (lines) => {
        const width = (io.stderr as { columns?: number }).columns ?? progressWidth;
        for (const l of lines) io.stderr.write(`${oneTerminalLine(l, width)}\n`);
      },
    });

    // Every line the containers wrote before the wait ended comes before the table.
    await containerOutput?.drain();
    const resultByUid = new Map(report.results.map((r) => [r.pod.metadata?.uid ?? '', r]));
    // The exit pod as its named container ended (since restarted under restartPolicy Always).
    const pods = kubelet.pods().map((p) => podWithStatus(p, resultByUid.get(p.metadata?.uid ?? '')?.endStatus ?? kubelet.getPodStatus(p.metadata?.uid ?? '')));
    const summaryPods = pods.map((pod) => {
      const r = resultByUid.get(pod.metadata?.uid ?? '');
      return { pod, ok: r?.ok ?? false, ...(r?.error ? { error: r.error } : {}) };
    });
    const readLog: ContainerLogReader = (pod, cs, id) => agent.readLogTail(pod, cs, id, summaryLogLines);
    const probes: PodProbeResults = (pod) => kubelet.probeManager.history?.entries(pod.metadata?.uid ?? '') ?? [];
    const reached = report.results.map((r) => (r.endStatus && r.ok ? 'finished' : r.waitedFor));
    const summary = await formatRunSummary(summaryPods, reachedText(reached), readLog, probes);
    if (parsed.flags.junit) {
      const { writeJUnitReport } = await import('../printers/junit.js');
      await writeJUnitReport(String(parsed.flags.junit), {
        name: 'podvisor run',
        pods: summaryPods,
        startedAt,
        durationMs: clock.now() - startedAt,
        readLog,
        probes,
      });
    }
    if (output === 'json' || output === 'yaml') {
      // Each failed pod carries its failed containers' log tails in annotations (podvisor.io/log-tail.<container>).
      const shown = await Promise.all(pods.map((p) => (resultByUid.get(p.metadata?.uid ?? '')?.ok === false ? withLogTails(p, readLog) : p)));
      io.stdout.write(formatObject(toV1List(shown), output));
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
    if (exitTarget) {
      const r = report.results.find((x) => x.pod.metadata?.name === exitTarget.name && (x.pod.metadata?.namespace ?? 'default') === exitTarget.ns);
      if (r?.exitCode !== undefined) return r.exitCode;
      const name = exitTarget.container ?? r?.pod.spec?.containers[0]?.name ?? '';
      io.stderr.write(`error: --exit-code-from: container ${name} of pod/${exitTarget.name} did not finish${r?.rejected ? ' (the pod was rejected)' : ''}\n`);
      return 1;
    }
    return report.results.every((r) => r.ok) ? 0 : 1;
  } finally {
    containerOutput?.stop();
    unwatch();
    await agent.close();
  }
}

const visible = runDefinition();

/** `podvisor run`; the hidden `--retry-delay` and `--progress-every` are taken out before the visible flags are parsed. */
export const runCommand: Command = {
  name: visible.name,
  summary: visible.summary,
  async run(argv, io) {
    const knobs: HiddenKnobs = {};
    let rest = argv;
    for (const [flag, key] of [
      [retryDelayFlag, 'retryDelayMs'],
      [progressEveryFlag, 'progressEveryMs'],
    ] as const) {
      const taken = takeHiddenFlag(rest, flag);
      rest = taken.argv;
      if (taken.value === undefined) continue;
      try {
        const ms = parseGoDuration(taken.value);
        if (ms <= 0) throw new Error('must be greater than 0');
        knobs[key] = ms;
      } catch (err) {
        return usageFailure(io, `invalid argument "${taken.value}" for "--${flag}" flag: ${(err as Error).message}`, 'run');
      }
    }
    return (Object.keys(knobs).length ? runDefinition(knobs) : visible).run(rest, io);
  },
};
