// The pod phase from its container statuses, as the kubelet's getPhase computes it (§9), plus the
// helpers the phase and the conditions share (sidecar detection, status lookup by name).

import type { Container, ContainerStatus, Pod } from '../api/types.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

type PodSpec = NonNullable<Pod['spec']>;

/** A sidecar is an init container whose own restartPolicy is Always (a restartable init container). */
export function isRestartableInitContainer(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

/** The status named `name`, as podutil.GetContainerStatus finds it (first match). */
export function findStatus(statuses: readonly ContainerStatus[] | undefined, name: string): ContainerStatus | undefined {
  if (!statuses) return undefined;
  for (const s of statuses) if (s.name === name) return s;
  return undefined;
}

/** True when any regular container's status is Running or Terminated (HasAnyRegularContainerStarted). */
export function hasAnyRegularContainerStarted(spec: PodSpec, statuses: readonly ContainerStatus[]): boolean {
  for (const c of spec.containers) {
    const s = findStatus(statuses, c.name);
    if (s && (s.state?.running || s.state?.terminated)) return true;
  }
  return false;
}

export function isTerminalPhase(phase: string | undefined): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}

/**
 * getPhase as §9, from the init container statuses and the regular container statuses.
 * `podIsTerminal` is the pod worker's verdict that nothing will run again. The kubelet ignores it
 * for static pods (their mirror pod is deleted by the API server instead); podvisor has no API server
 * to delete anything, so every pod is treated as a regular pod: terminal → Succeeded or Failed by
 * the exit codes.
 */
export function getPhase(
  spec: PodSpec,
  initStatuses: readonly ContainerStatus[] | undefined,
  statuses: readonly ContainerStatus[] | undefined,
  podIsTerminal: boolean,
): PodPhase {
  const regular = statuses ?? [];
  const restartPolicy = spec.restartPolicy ?? 'Always';
  const initContainers = spec.initContainers ?? [];
  let pendingInitialization = 0;
  let failedInitialization = 0;

  // plain init containers
  for (const c of initContainers) {
    if (isRestartableInitContainer(c)) continue;
    const s = findStatus(initStatuses, c.name);
    if (!s) {
      pendingInitialization++;
      continue;
    }
    const state = s.state ?? {};
    if (state.running) {
      pendingInitialization++;
    } else if (state.terminated) {
      if (state.terminated.exitCode !== 0) failedInitialization++;
    } else if (state.waiting) {
      const last = s.lastState?.terminated;
      if (last) {
        if (last.exitCode !== 0) failedInitialization++;
      } else {
        pendingInitialization++;
      }
    } else {
      pendingInitialization++;
    }
  }

  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;

  // sidecars: a terminated sidecar does not count towards the phase
  for (const c of initContainers) {
    if (!isRestartableInitContainer(c)) continue;
    const s = findStatus(initStatuses, c.name);
    if (!s) {
      unknown++;
      continue;
    }
    const state = s.state ?? {};
    if (state.running) {
      if (s.started !== true) pendingInitialization++;
      running++;
    } else if (state.terminated) {
      // ignored
    } else if (state.waiting) {
      if (!s.lastState?.terminated) {
        pendingInitialization++;
        waiting++;
      }
    } else {
      pendingInitialization++;
      unknown++;
    }
  }

  for (const c of spec.containers) {
    const s = findStatus(regular, c.name);
    if (!s) {
      unknown++;
      continue;
    }
    const state = s.state ?? {};
    if (state.running) {
      running++;
    } else if (state.terminated) {
      stopped++;
      if (state.terminated.exitCode === 0) succeeded++;
    } else if (state.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else {
      unknown++;
    }
  }

  if (failedInitialization > 0 && restartPolicy === 'Never') return 'Failed';

  // Restarting sidecars must not push an initialized pod back to Pending.
  if ((pendingInitialization > 0 && !hasAnyRegularContainerStarted(spec, regular)) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}
