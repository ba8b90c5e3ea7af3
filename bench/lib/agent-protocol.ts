// The calls the bench makes on the agent host (bench/procs/agent-host.ts) and what they return;
// shared by both sides so they cannot drift apart.

import type { WindowReport } from './window.js';

export interface LoadParams {
  rootDir: string;
  /** Node allocatable pod count; the kubelet's default (110) would reject the larger sizes. */
  maxPods: number;
  /** Event reasons the host reports as notes the moment it sees them (e.g. Killing). */
  noteReasons: string[];
  /**
   * Run the pods through the process runtime service (`podvisor runtime serve`, started when
   * nothing answers on the root dir's endpoint) as `podvisor up` does, instead of in-process; start
   * then adopts the pods the service still runs.
   */
  viaService?: boolean;
  /** Run the pods on the CRI runtime at this endpoint (containerd) instead of host processes. */
  criEndpoint?: string;
}

export interface LoadReply {
  /** When the kubelet (and its prober) was created, ms since epoch. */
  createdAt: number;
  /** The runtime service's pid, with viaService. */
  runtimePid?: number;
}

export interface StartParams {
  /** Directory of manifests, read with the project's loader as `podvisor up -f DIR` reads it. */
  manifestDir: string;
}

export interface StartReply {
  /** When the host began reading the manifests, ms since epoch. */
  t0: number;
  /** ms spent reading, defaulting and validating the manifests. */
  loadMs: number;
  pods: string[];
  rejected: Array<{ name: string; reason: string; message: string }>;
}

export interface WaitParams {
  condition: 'running' | 'ready';
  /** Pods to wait for; all pods started so far when omitted. */
  pods?: string[];
  timeoutMs: number;
}

export interface WaitReply {
  /** Pod name → ms from its round's t0 to the first status showing the condition. */
  times: Record<string, number>;
}

/** A measurement window of the agent process; counters are described in agent-host.ts. */
export interface AgentWindow extends WindowReport {
  /** Events by reason during the window. */
  events: Record<string, number>;
}

/** A note of an event the bench asked to hear about. */
export interface EventNote {
  reason: string;
  pod: string;
  message: string;
  /** When the host's recorder received it, ms since epoch (sub-ms resolution). */
  at: number;
}
