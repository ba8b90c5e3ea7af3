// The run-once summary under the pod table: each failed pod with why it failed, its failed
// containers (exit codes or waiting reasons, messages), their last probe results with the probes'
// output, and the last lines of their logs — the failure report a CI log shows (and JUnit holds).

import type { ContainerStatus, Pod } from '../api/types.js';
import type { ProbeHistoryItem } from './probe-timeline.js';

export const summaryLogLines = 20;
/** Probe results quoted per failing container. */
export const summaryProbeResults = 5;

/** The probe history of a pod (the agent's), oldest first; [] when none is kept. */
export type PodProbeResults = (pod: Pod) => readonly ProbeHistoryItem[];

export interface SummaryPod {
  /** The pod with the status it ended with. */
  pod: Pod;
  ok: boolean;
  /** Why it failed (run-once's error, or the rejection). */
  error?: string;
}

/** Where `-o json|yaml` carries a failed container's log tail: the annotation `podvisor.io/log-tail.<container>` of its pod. */
export const logTailAnnotationPrefix = 'podvisor.io/log-tail.';

/**
 * The pod with the last log lines of each failed container (one whose containerProblem is not
 * undefined) in its annotations under logTailAnnotationPrefix, joined by newlines.
 */
export async function withLogTails(pod: Pod, readLog: ContainerLogReader): Promise<Pod> {
  const tails: Record<string, string> = {};
  for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    if (!containerProblem(cs)) continue;
    const lines = await readLog(pod, cs, cs.containerID);
    if (lines.length) tails[`${logTailAnnotationPrefix}${cs.name}`] = lines.join('\n');
  }
  if (Object.keys(tails).length === 0) return pod;
  return { ...pod, metadata: { ...pod.metadata, annotations: { ...(pod.metadata?.annotations ?? {}), ...tails } } };
}

/** Reads the last lines of one container instance's log; [] when there is none. */
export type ContainerLogReader = (pod: Pod, status: ContainerStatus, containerId: string | undefined) => Promise<string[]>;

/** Waiting reasons that only say a container has not been started yet. */
const notStartedYet = new Set(['ContainerCreating', 'PodInitializing']);

function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, ' ');
}

/** The message lines of a container's terminated state (its termination message), indented. */
function messageLines(cs: ContainerStatus): string[] {
  const t = cs.state?.terminated ?? (cs.state?.waiting ? cs.lastState?.terminated : undefined);
  const message = t?.message?.replace(/\n+$/, '');
  if (!message || t?.exitCode === 0) return [];
  const lines = message.split('\n');
  return [`    message${lines.length === 1 ? `: ${lines[0]}` : ':'}`, ...(lines.length === 1 ? [] : lines.map((l) => `    > ${l}`))];
}

function terminatedText(t: { exitCode: number; reason?: string; signal?: number }): string {
  const reason = t.reason ? ` (${t.reason})` : '';
  return `exit code ${t.exitCode}${reason}`;
}

/**
 * What is wrong with one container, or undefined when nothing is: exited non-zero, waiting for a
 * reason other than its turn to start, or running but not ready (a plain init container is never
 * ready while it runs: it is only not finished).
 */
export function containerProblem(cs: ContainerStatus, plainInit = false): string | undefined {
  const st = cs.state ?? {};
  const last = cs.lastState?.terminated;
  if (st.terminated) return st.terminated.exitCode === 0 ? undefined : terminatedText(st.terminated);
  if (st.waiting) {
    const reason = st.waiting.reason ?? '';
    if (!last && (reason === '' || notStartedYet.has(reason))) return undefined;
    const parts = [reason ? `waiting: ${reason}${st.waiting.message && reason !== 'CrashLoopBackOff' ? `: ${oneLine(st.waiting.message)}` : ''}` : 'waiting'];
    if (last) parts.push(`last ${terminatedText(last)}`);
    if (cs.restartCount) parts.push(`${cs.restartCount} restart${cs.restartCount === 1 ? '' : 's'}`);
    return parts.join(', ');
  }
  if (st.running && plainInit) return 'running, not finished';
  if (st.running && !cs.ready) return cs.started === false ? 'running, not started' : 'running, not ready';
  return undefined;
}

/** The id of the instance whose log tells what went wrong: the terminated one, else the current. */
function instanceId(cs: ContainerStatus): string | undefined {
  return cs.state?.terminated?.containerID || cs.lastState?.terminated?.containerID || cs.containerID || undefined;
}

function podName(pod: Pod): string {
  return `pod/${pod.metadata?.name ?? ''}`;
}

/** What the report says of one failed pod: its lines, and the log tails quoted in them. */
export interface PodFailureReport {
  pod: Pod;
  /** The pod's lines of the summary (headline first). */
  lines: string[];
  /** The log tail of each failing container, by container name. */
  logs: Array<{ container: string; lines: string[] }>;
}

function probeLine(e: ProbeHistoryItem): string {
  const streak = e.result === 'Unknown' ? '' : ` ${e.streak}/${e.threshold}`;
  const effect = e.effect ? ` -> ${e.effect}` : '';
  const output = oneLine(e.output);
  return `    | ${e.time} ${e.probe} ${e.result}${streak}${effect}${output ? `: ${output}` : ''}`;
}

/** The report of one failed pod: why, its failing containers with message, last probe results and log tail. */
export async function podFailureReport(f: SummaryPod, readLog: ContainerLogReader, probes: PodProbeResults = () => []): Promise<PodFailureReport> {
  const out: string[] = [`${podName(f.pod)}: ${f.error ?? 'failed'}`];
  const logs: PodFailureReport['logs'] = [];
  const status = f.pod.status ?? {};
  const sidecars = new Set((f.pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  const statuses = [
    ...(status.initContainerStatuses ?? []).map((cs) => ({ cs, plainInit: !sidecars.has(cs.name) })),
    ...(status.containerStatuses ?? []).map((cs) => ({ cs, plainInit: false })),
  ];
  const history = probes(f.pod);
  for (const { cs, plainInit } of statuses) {
    const problem = containerProblem(cs, plainInit);
    if (!problem) continue;
    out.push(`  container ${cs.name}: ${problem}`, ...messageLines(cs));
    const results = history.filter((e) => e.container === cs.name).slice(-summaryProbeResults);
    if (results.length > 0) {
      out.push(`    last ${results.length} probe result${results.length === 1 ? '' : 's'}:`);
      for (const e of results) out.push(probeLine(e));
    }
    const lines = await readLog(f.pod, cs, instanceId(cs)).catch(() => [] as string[]);
    logs.push({ container: cs.name, lines });
    if (lines.length === 0) {
      out.push('    (no log output)');
      continue;
    }
    out.push(`    last ${lines.length} log line${lines.length === 1 ? '' : 's'}:`);
    for (const l of lines) out.push(`    | ${l}`);
  }
  return { pod: f.pod, lines: out, logs };
}

/**
 * The summary text: a headline, then for each failed pod its error and failed containers with
 * their last probe results and log lines (indented). `waitedFor` names the condition in the headline.
 */
export async function formatRunSummary(pods: readonly SummaryPod[], waitedFor: string, readLog: ContainerLogReader, probes?: PodProbeResults): Promise<string> {
  const failed = pods.filter((p) => !p.ok);
  if (failed.length === 0) return `all ${pods.length} pod${pods.length === 1 ? '' : 's'} ${waitedFor}\n`;
  const out: string[] = [`${failed.length} of ${pods.length} pod${pods.length === 1 ? '' : 's'} failed:`];
  for (const f of failed) out.push(...(await podFailureReport(f, readLog, probes)).lines);
  return out.join('\n') + '\n';
}
