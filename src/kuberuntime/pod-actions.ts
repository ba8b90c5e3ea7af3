// What one sync of a pod must do, as pure functions after kuberuntime's computePodActions and
// computeInitContainerActions (§7.2, §7.3, §8.1): which containers to kill, which to start, or
// whether the whole pod is done. No I/O here; the pod worker applies the result.

import type { Container, Pod } from '../api/types.js';
import type { ProbeResult } from '../prober/types.js';
import type { ContainerStatus as RuntimeContainerStatus } from '../runtime/cri.js';
import { compareNewestFirst, shouldContainerBeRestarted } from '../status/container-statuses.js';
import { ANNOTATION_CONTAINER_HASH } from './container-config.js';
import { isSidecar } from './format.js';
import type { KillReason } from './grace.js';

/** The runtime instances of one pod, grouped by container name, newest first (kubecontainer.PodStatus). */
export class RuntimePod {
  private readonly byName = new Map<string, RuntimeContainerStatus[]>();

  constructor(readonly containers: readonly RuntimeContainerStatus[]) {
    const sorted = [...containers].sort(compareNewestFirst);
    for (const c of sorted) {
      const list = this.byName.get(c.metadata.name);
      if (list) list.push(c);
      else this.byName.set(c.metadata.name, [c]);
    }
  }

  /** FindContainerStatusByName: the newest instance. */
  latest(name: string): RuntimeContainerStatus | undefined {
    return this.byName.get(name)?.[0];
  }

  /** Every instance of name, newest first. */
  instances(name: string): readonly RuntimeContainerStatus[] {
    return this.byName.get(name) ?? [];
  }

  /** All instances, newest first. */
  allNewestFirst(): RuntimeContainerStatus[] {
    return [...this.byName.values()].flat().sort(compareNewestFirst);
  }

  running(): RuntimeContainerStatus[] {
    return this.containers.filter((c) => c.state === 'CONTAINER_RUNNING');
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}

export interface ContainerToKill {
  /** Runtime-local container id. */
  id: string;
  name: string;
  container: Container;
  /** Killing event message (empty → `Stopping container <c>`). */
  message: string;
  reason: KillReason;
}

export interface PodActions {
  /** Nothing is to be kept or started: stop every container (sidecars ordered) — the pod is done. */
  killPod: boolean;
  /** Indexes into spec.initContainers, in spec order. */
  initContainersToStart: number[];
  /** Indexes into spec.containers. */
  containersToStart: number[];
  containersToKill: ContainerToKill[];
}

export interface ProbeResultsView {
  get(containerId: string): ProbeResult | undefined;
}

export interface ActionInputs {
  pod: Pod;
  runtimePod: RuntimePod;
  /** Scheme of the probe caches' keys: `<runtimeName>://<id>`. */
  runtimeName: string;
  liveness: ProbeResultsView;
  startup: ProbeResultsView;
  /** Hash of a container spec; when given, a running instance annotated with another hash is replaced. */
  specHash?: (c: Container) => string;
}

const restartOnFailure = (pod: Pod) => (pod.spec?.restartPolicy ?? 'Always') !== 'Never';

/** isInitContainerFailed: exited non-zero, OOMKilled, or in unknown state. */
export function isInitContainerFailed(status: RuntimeContainerStatus): boolean {
  if (status.state === 'CONTAINER_EXITED' && (status.exitCode !== 0 || status.reason === 'OOMKilled')) return true;
  return status.state === 'CONTAINER_UNKNOWN';
}

function definitionChanged(inputs: ActionInputs, container: Container, status: RuntimeContainerStatus): boolean {
  if (!inputs.specHash) return false;
  const recorded = status.annotations?.[ANNOTATION_CONTAINER_HASH];
  return recorded !== undefined && recorded !== inputs.specHash(container);
}

/** computePodActions for a pod whose sandbox exists. */
export function computePodActions(inputs: ActionInputs): PodActions {
  const { pod, runtimePod } = inputs;
  const changes: PodActions = { killPod: false, initContainersToStart: [], containersToStart: [], containersToKill: [] };
  const cid = (s: RuntimeContainerStatus) => `${inputs.runtimeName}://${s.id}`;

  const initialized = computeInitContainerActions(inputs, changes);
  if (changes.killPod || !initialized) return changes;

  let keepCount = 0;
  const containers = pod.spec?.containers ?? [];
  containers.forEach((container, idx) => {
    const status = runtimePod.latest(container.name);
    if (!status || status.state !== 'CONTAINER_RUNNING') {
      if (shouldContainerBeRestarted(container, pod, status, false)) {
        changes.containersToStart.push(idx);
        if (status?.state === 'CONTAINER_UNKNOWN') {
          changes.containersToKill.push({
            id: status.id,
            name: container.name,
            container,
            message: `Container is in "unknown" state, try killing it before restart`,
            reason: 'unknown',
          });
        }
      }
      return;
    }
    let message: string;
    let reason: KillReason = '';
    let restart = restartOnFailure(pod);
    if (definitionChanged(inputs, container, status)) {
      message = `Container ${container.name} definition changed`;
      restart = true;
    } else if (inputs.liveness.get(cid(status)) === 'Failure') {
      message = `Container ${container.name} failed liveness probe`;
      reason = 'liveness';
    } else if (inputs.startup.get(cid(status)) === 'Failure') {
      message = `Container ${container.name} failed startup probe`;
      reason = 'startup';
    } else {
      keepCount++;
      return;
    }
    if (restart) {
      message = `${message}, will be restarted`;
      changes.containersToStart.push(idx);
    }
    changes.containersToKill.push({ id: status.id, name: container.name, container, message, reason });
  });

  if (keepCount === 0 && changes.containersToStart.length === 0) {
    changes.killPod = true;
    // Sidecars must not keep a finished pod alive.
    changes.initContainersToStart = [];
  }
  return changes;
}

/**
 * computeInitContainerActions: walks init containers from last to first, restarting sidecars and
 * finding the next one to start; returns whether the pod has initialized. A failed plain init
 * container under restartPolicy Never sets killPod.
 */
export function computeInitContainerActions(inputs: ActionInputs, changes: PodActions): boolean {
  const { pod, runtimePod } = inputs;
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return true;
  const cid = (s: RuntimeContainerStatus) => `${inputs.runtimeName}://${s.id}`;

  // A regular container that exists (Created or Running) means every init container ran at some
  // point, even if the runtime no longer holds them.
  let podHasInitialized = (pod.spec?.containers ?? []).some((c) => {
    const s = runtimePod.latest(c.name);
    return s?.state === 'CONTAINER_CREATED' || s?.state === 'CONTAINER_RUNNING';
  });
  let isPreviouslyInitialized = podHasInitialized;
  const onFailureRestart = restartOnFailure(pod);
  const toStart: number[] = [];
  const kill = (status: RuntimeContainerStatus, container: Container, message: string, reason: KillReason) =>
    changes.containersToKill.push({ id: status.id, name: container.name, container, message, reason });

  for (let i = inits.length - 1; i >= 0; i--) {
    const container = inits[i]!;
    const sidecar = isSidecar(container);
    const status = runtimePod.latest(container.name);
    if (!status) {
      if (isPreviouslyInitialized && sidecar) toStart.push(i);
      continue;
    }
    if (isPreviouslyInitialized && !sidecar) continue;

    switch (status.state) {
      case 'CONTAINER_CREATED':
        toStart.push(i);
        break;
      case 'CONTAINER_RUNNING': {
        if (!sidecar) break;
        if (container.startupProbe) {
          const startup = inputs.startup.get(cid(status));
          if (startup === undefined) break;
          if (startup !== 'Success') {
            if (startup === 'Failure') {
              kill(status, container, `Init container ${container.name} failed startup probe`, 'startup');
              toStart.push(i);
            }
            break;
          }
        }
        if (i === inits.length - 1) podHasInitialized = true;
        else if (!isPreviouslyInitialized) toStart.push(i + 1);

        if (definitionChanged(inputs, container, status)) {
          kill(status, container, `Init container ${container.name} definition changed`, '');
          toStart.push(i);
          break;
        }
        // Liveness does not gate the next init container, it only restarts this one.
        if (container.livenessProbe) {
          const liveness = inputs.liveness.get(cid(status));
          if (liveness === 'Failure') {
            kill(status, container, `Init container ${container.name} failed liveness probe`, 'liveness');
            toStart.push(i);
          }
        }
        break;
      }
      case 'CONTAINER_EXITED':
        if (sidecar) {
          toStart.push(i);
          break;
        }
        if (isInitContainerFailed(status)) {
          if (!onFailureRestart) {
            changes.killPod = true;
            changes.initContainersToStart = [];
            return false;
          }
          toStart.push(i);
          break;
        }
        if (i === inits.length - 1) podHasInitialized = true;
        else toStart.push(i + 1);
        break;
      default:
        if (!sidecar && !onFailureRestart) {
          changes.killPod = true;
          changes.initContainersToStart = [];
          return false;
        }
        kill(status, container, `Init container is in "unknown" state, try killing it before restart`, 'unknown');
        toStart.push(i);
    }
    if (!isPreviouslyInitialized) isPreviouslyInitialized = true;
  }

  if (!isPreviouslyInitialized) toStart.push(0);
  changes.initContainersToStart = toStart.reverse();
  return podHasInitialized;
}
