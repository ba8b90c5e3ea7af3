// The pod table of `kubectl get pods`: READY, STATUS and RESTARTS computed exactly as kubectl's
// printPod computes them, so a pod reads the same here as on a cluster.

import type { Container, ContainerStatus, Pod, PodCondition, PodStatus } from '../../api/types.js';
import { tabwrite, translateTimestampSince } from '../../events/format.js';

/** The node-lifecycle reason kubectl shows as `Unknown` for a terminating pod. */
const NodeUnreachablePodReason = 'NodeLost';

export const podColumns = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'] as const;
export const podWideColumns = [...podColumns, 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'] as const;

export interface PodPrintOptions {
  wide?: boolean;
  /** ms since epoch the ages are measured against. */
  now: number;
}

function isRestartable(c: Container | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

function isTerminalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

function conditionTrue(conditions: PodCondition[] | undefined, type: string): boolean {
  return (conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** Later of two RFC 3339 times (either may be unset). */
function later(a: string | undefined, b: string | undefined): string | undefined {
  if (!b) return a;
  if (!a) return b;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** The cells of one pod row, as printPod builds them. */
export function podRow(pod: Pod, opts: PodPrintOptions): string[] {
  const spec = pod.spec;
  const status: PodStatus = pod.status ?? {};
  let restarts = 0;
  let restartableInitContainerRestarts = 0;
  let totalContainers = spec?.containers.length ?? 0;
  let readyContainers = 0;
  let lastRestartDate: string | undefined;
  let lastRestartableInitContainerRestartDate: string | undefined;

  const podPhase = status.phase;
  let reason: string = podPhase ?? '';
  if (status.reason) reason = status.reason;

  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initContainers = new Map<string, Container>();
  for (const c of spec?.initContainers ?? []) {
    initContainers.set(c.name, c);
    if (isRestartable(c)) totalContainers++;
  }

  let initializing = false;
  const initStatuses: ContainerStatus[] = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const container = initStatuses[i]!;
    restarts += container.restartCount ?? 0;
    const lastTerminated = container.lastState?.terminated;
    if (lastTerminated) lastRestartDate = later(lastRestartDate, lastTerminated.finishedAt);
    const restartable = isRestartable(initContainers.get(container.name));
    if (restartable) {
      restartableInitContainerRestarts += container.restartCount ?? 0;
      if (lastTerminated) lastRestartableInitContainerRestartDate = later(lastRestartableInitContainerRestartDate, lastTerminated.finishedAt);
    }
    const terminated = container.state?.terminated;
    const waiting = container.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (restartable && container.started === true) {
      if (container.ready) readyContainers++;
      continue;
    }
    if (terminated) {
      // initialization failed
      if (!terminated.reason) {
        reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode}`;
      } else {
        reason = `Init:${terminated.reason}`;
      }
    } else if (waiting && waiting.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${spec?.initContainers?.length ?? 0}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(status.conditions, 'Initialized')) {
    restarts = restartableInitContainerRestarts;
    lastRestartDate = lastRestartableInitContainerRestartDate;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i]!;
      restarts += container.restartCount ?? 0;
      const lastTerminated = container.lastState?.terminated;
      if (lastTerminated) lastRestartDate = later(lastRestartDate, lastTerminated.finishedAt);
      const waiting = container.state?.waiting;
      const terminated = container.state?.terminated;
      if (waiting && waiting.reason) {
        reason = waiting.reason;
      } else if (terminated && terminated.reason) {
        reason = terminated.reason;
      } else if (terminated) {
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      } else if (container.ready && container.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // A pod with a container still running is not "Completed" yet.
    if (reason === 'Completed' && hasRunning) {
      reason = conditionTrue(status.conditions, 'Ready') ? 'Running' : 'NotReady';
    }
  }

  const deleting = !!pod.metadata?.deletionTimestamp;
  if (deleting && status.reason === NodeUnreachablePodReason) reason = 'Unknown';
  else if (deleting && !isTerminalPhase(podPhase)) reason = 'Terminating';

  let restartsStr = String(restarts);
  if (restarts !== 0 && lastRestartDate) {
    restartsStr = `${restarts} (${translateTimestampSince(lastRestartDate, opts.now)} ago)`;
  }

  const cells = [
    pod.metadata?.name ?? '',
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsStr,
    translateTimestampSince(pod.metadata?.creationTimestamp, opts.now),
  ];
  if (opts.wide) {
    const podIP = status.podIPs?.[0]?.ip || '<none>';
    const nodeName = spec?.nodeName || '<none>';
    const nominatedNodeName = status.nominatedNodeName || '<none>';
    let readinessGates = '<none>';
    const gates = spec?.readinessGates ?? [];
    if (gates.length > 0) {
      let trueConditions = 0;
      for (const gate of gates) {
        const cond = (status.conditions ?? []).find((c) => c.type === gate.conditionType);
        if (cond?.status === 'True') trueConditions++;
      }
      readinessGates = `${trueConditions}/${gates.length}`;
    }
    cells.push(podIP, nodeName, nominatedNodeName, readinessGates);
  }
  return cells;
}

/** The STATUS column alone. */
export function podStatusReason(pod: Pod, now = Date.now()): string {
  return podRow(pod, { now })[2]!;
}

/** A `kubectl get pods` table (with `-o wide` columns when asked). */
export function formatPodTable(pods: readonly Pod[], opts: PodPrintOptions): string {
  // printers.GetNewTabWriter's settings.
  return tabwrite([opts.wide ? podWideColumns : podColumns, ...pods.map((p) => podRow(p, opts))], { minwidth: 6, padding: 3 });
}
