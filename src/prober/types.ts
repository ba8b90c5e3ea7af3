// The prober's contract with the rest of the agent, after the kubelet's prober.Manager and
// results.Manager: the pod worker adds and removes pods, reads the three result caches, and lets the
// manager fill in `started`/`ready` on every status it generates; and the probe history's entries as served.

import type { Container, Pod, PodStatus, ProbeType } from '../api/types.js';

/** Result of a probe as the kubelet's results package encodes it. */
export type ProbeResult = 'Success' | 'Failure' | 'Unknown';

export interface ResultUpdate {
  /** `<runtime>://<id>`, as in v1 ContainerStatus.containerID. */
  containerId: string;
  result: ProbeResult;
  podUid: string;
}

/** One of the three result caches (liveness, readiness, startup), read-only view. */
export interface ResultsReader {
  get(containerId: string): ProbeResult | undefined;
  /** Called on every published change (never for an unchanged Set, never for Remove). */
  onUpdate(listener: (u: ResultUpdate) => void): () => void;
}

/** Where workers read the latest pod object and its generated status (the kubelet's status manager). */
export interface PodStatusProvider {
  getPodStatus(podUid: string): PodStatus | undefined;
  /** The current pod object (its deletionTimestamp tells a worker that termination began). */
  getPod(podUid: string): Pod | undefined;
}

export interface ProbeManager {
  /** Creates missing workers for the pod's regular containers and sidecars; idempotent. */
  addPod(pod: Pod): void;
  /** Stops the liveness and startup workers of regular containers (termination began). */
  stopLivenessAndStartup(pod: Pod): void;
  /** Stops every worker of the pod. */
  removePod(pod: Pod): void;
  /** Stops the workers of every pod whose UID is not in desired. */
  cleanupPods(desired: Set<string>): void;
  /** Sets ContainerStatus.started and .ready in place, by the kubelet's table (§3.3). */
  updatePodStatus(pod: Pod, status: PodStatus): void;
  readonly liveness: ResultsReader;
  readonly readiness: ResultsReader;
  readonly startup: ResultsReader;
  /** Stops every worker. */
  close(): void;
  /** The results every worker saw (`podvisor probes`); absent when none are kept. */
  readonly history?: ProbeHistoryReader;
}

/** What the prober reports for one probe run: the result, and an error when the probe could not run. */
export interface ProbeOutcome {
  result: ProbeResult;
  /** Set when the probe errored (after its retries); the worker then discards the result (§4.3 step 11). */
  error?: Error;
  /** What the probe said (its action's output), for the probe history. */
  output?: string;
}

/**
 * Runs one probe of a container (§5.1): the boundary between the worker loop and the probe kinds.
 * containerId is the status form `<runtime>://<id>`.
 */
export interface Prober {
  probe(probeType: ProbeType, pod: Pod, status: PodStatus, container: Container, containerId: string): Promise<ProbeOutcome>;
}

/** What a result changed: nothing, the container's readiness, its start-up, or a restart. */
export type ProbeEffect = '' | 'Ready' | 'NotReady' | 'Started' | 'Restart';

/** The probe names of the history document. */
export type ProbeName = 'liveness' | 'readiness' | 'startup';

/** One probe result, as `GET /podvisor/v1/namespaces/{ns}/pods/{name}/probes` serves it. */
export interface ProbeHistoryEntry {
  container: string;
  probe: ProbeName;
  /** RFC 3339 with milliseconds: when the probe started. */
  time: string;
  result: ProbeResult;
  latencyMs: number;
  /** What the probe said (exec output, HTTP status or body, dial error), at most 1 KiB. */
  output: string;
  /** How many of this result in a row, as the worker counts them. */
  streak: number;
  /** The threshold the streak is measured against (failureThreshold or successThreshold). */
  threshold: number;
  effect: ProbeEffect;
}

/** What readers of the history (the agent's routes, describe, run's report) see. */
export interface ProbeHistoryReader {
  /** The pod's results, oldest first; [] for a pod never probed (or forgotten). */
  entries(podUid: string): ProbeHistoryEntry[];
  /** Calls listener with each new result of the pod; returns the unsubscribe. */
  watch(podUid: string, listener: (e: ProbeHistoryEntry) => void): () => void;
}
