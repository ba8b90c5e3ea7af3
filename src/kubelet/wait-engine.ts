// The one wait engine behind run, up, up -d --wait, apply --wait and `podvisor wait`: from an object
// and its recent events, decide to keep waiting, succeed, or fail at once because nothing but a change
// to the object can help (kubectl wait's --for forms, plus podvisor's running|ready|completed|auto).
// Pure functions, no clock and no I/O: the callers feed them watch events or kubelet status updates.

import type { ContainerStatus, Pod, PodStatus } from '../api/types.js';
import { jsonPathText, jsonPathValues } from '../printers/jsonpath.js';

/** Keep waiting, the condition holds, or it never will (and why). */
export type WaitDecision = 'wait' | 'done' | { fail: string };

/** The part of an Event the engine reads. */
export interface WaitEvent {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { fieldPath?: string; uid?: string };
}

/**
 * How one kind of object is waited for. Pods have podWait; a workload kind plugs in its own
 * function (Job complete or failed, Deployment available or its progress deadline exceeded).
 */
export type ObjectWait<T = unknown> = (obj: T, events: readonly WaitEvent[]) => WaitDecision;

/** podvisor's own conditions (run's --wait): the kubelet's run-once rule and what each pod means. */
export type PodWaitMode = 'auto' | 'running' | 'ready' | 'completed';

/**
 * What `--for` asks: a podvisor mode, a condition, a JSONPath value, or the object's deletion; or,
 * for `run --exit-code-from POD/CONTAINER`, the end of one container (see containerExit).
 */
export type WaitTarget =
  | { kind: 'mode'; mode: PodWaitMode }
  | { kind: 'condition'; type: string; status: string }
  | { kind: 'jsonpath'; path: string; value?: string }
  | { kind: 'delete' }
  | { kind: 'exit'; container: string };

const modes: readonly string[] = ['auto', 'running', 'ready', 'completed'];

/** Parses kubectl's `--for` (condition=X[=V], delete, jsonpath={…}[=V]) and podvisor's modes. */
export function parseWaitFor(text: string): WaitTarget {
  if (modes.includes(text)) return { kind: 'mode', mode: text as PodWaitMode };
  if (text === 'delete') return { kind: 'delete' };
  if (text.startsWith('condition=')) {
    const [type = '', status = 'true'] = text.slice('condition='.length).split('=');
    if (!type) throw new Error('condition name cannot be empty');
    return { kind: 'condition', type, status };
  }
  if (text.startsWith('jsonpath=')) {
    const rest = text.slice('jsonpath='.length);
    // `{.a.b}=value`, `{.a.b}`, or kubectl's older `.a.b=value` without braces.
    const m = /^(\{.*\})(?:=(.*))?$/s.exec(rest) ?? /^([^=]+)(?:=(.*))?$/s.exec(rest);
    if (!m?.[1]) throw new Error("jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3 or --for=jsonpath='{.status.readyReplicas}'");
    return { kind: 'jsonpath', path: m[1], ...(m[2] !== undefined ? { value: m[2] } : {}) };
  }
  throw new Error(`unrecognized condition: "${text}"`);
}

/** What `auto` waits for in a pod: completion for Never/OnFailure pods, Ready with a readiness probe, else Running. */
export function resolvePodMode(pod: Pod, mode: PodWaitMode): Exclude<PodWaitMode, 'auto'> {
  if (mode !== 'auto') return mode;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never' || policy === 'OnFailure') return 'completed';
  const probed = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
  return probed.some((c) => c.readinessProbe) ? 'ready' : 'running';
}

/**
 * Warning events that say nothing of why a pod is not there yet (the fallback from cluster DNS to the
 * host's resolv.conf changes nothing of its start): left out of progress lines and failure reports.
 */
const notAnObstacle = new Set(['MissingClusterDNS']);

/** Whether a Warning event may tell why a pod is still awaited. */
export function explainsWait(ev: WaitEvent): boolean {
  return ev.type === 'Warning' && !notAnObstacle.has(ev.reason ?? '');
}

/** Waiting reasons after which a container will not run as specified without a change to the pod. */
const hopelessWaiting = new Set([
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'InvalidImageName',
  'ErrImageNeverPull',
]);
/** Terminated reasons of a container that could not be started at all. */
const hopelessTerminated = new Set(['StartError', 'ContainerCannotRun']);
/**
 * Pull failures a retry cannot mend: the image or tag does not exist, the registry refuses the
 * credentials, or its name does not resolve (containerd's and the registries' wordings).
 */
const hopelessPullCause =
  /\bnot ?found\b|manifest unknown|name unknown|repository does not exist|unauthorized|authentication required|access denied|\bdenied\b|\b401\b|\b403\b|no such host|ENOTFOUND|EAI_AGAIN|server misbehaving|name resolution|could not resolve/i;

function containerLabel(cs: ContainerStatus, init: boolean): string {
  return `${init ? 'init container' : 'container'} ${cs.name}`;
}

/** The latest `Failed to pull image` message recorded for a container. */
function lastPullFailure(name: string, init: boolean, events: readonly WaitEvent[]): string | undefined {
  const fieldPath = `spec.${init ? 'initContainers' : 'containers'}{${name}}`;
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i]!;
    if (ev.reason !== 'Failed' || !ev.message?.startsWith('Failed to pull image')) continue;
    const path = ev.involvedObject?.fieldPath;
    if (!path || path === fieldPath) return ev.message;
  }
  return undefined;
}

/**
 * Why a pod can no longer reach any condition without a change to it, or undefined while it still
 * can: a container waiting for a reason only a change ends (CrashLoopBackOff, a config error), one
 * that could not be started, or an image in pull back-off whose last pull failed for good (not
 * found, unauthorized, an unresolvable registry). Terminal phases are decided by terminalDecision.
 */
export function cannotSucceed(status: PodStatus | undefined, events: readonly WaitEvent[] = []): string | undefined {
  if (!status) return undefined;
  const all = [
    ...(status.initContainerStatuses ?? []).map((cs) => ({ cs, init: true })),
    ...(status.containerStatuses ?? []).map((cs) => ({ cs, init: false })),
  ];
  for (const { cs, init } of all) {
    const waiting = cs.state?.waiting;
    if (waiting?.reason && hopelessWaiting.has(waiting.reason)) {
      const last = cs.lastState?.terminated;
      const because =
        waiting.reason === 'CrashLoopBackOff' && last
          ? `exited with code ${last.exitCode}${last.reason ? ` (${last.reason})` : ''}, ${cs.restartCount ?? 0} restart${cs.restartCount === 1 ? '' : 's'}`
          : waiting.message;
      return `${containerLabel(cs, init)}: ${init && waiting.reason === 'CrashLoopBackOff' ? 'Init:' : ''}${waiting.reason}${because ? `: ${because}` : ''}`;
    }
    if (waiting?.reason === 'ImagePullBackOff') {
      const cause = lastPullFailure(cs.name, init, events) ?? waiting.message;
      if (cause && hopelessPullCause.test(cause)) return `${containerLabel(cs, init)}: ImagePullBackOff: ${cause}`;
    }
    for (const t of [cs.state?.terminated, cs.lastState?.terminated]) {
      if (t?.reason && hopelessTerminated.has(t.reason)) {
        return `${containerLabel(cs, init)}: ${t.reason}${t.message ? `: ${t.message}` : ''}`;
      }
    }
  }
  return undefined;
}

/**
 * `run --exit-code-from POD/CONTAINER`: the exit code of a regular container once the run it made
 * has ended for the command, else undefined. The kubelet starts a container again after it ends
 * unless the pod's restartPolicy is Never, or OnFailure and it exited 0: those ends are final. Under
 * OnFailure a non-zero exit is restarted, so it counts only once the kubelet backs off
 * (CrashLoopBackOff, which fails the wait at once; the code is then containerExitCode's). Under
 * Always every end is followed by a restart: the first end counts (the container's one run of its
 * test), seen as its terminated state or, once restarted, as its last state.
 */
export function containerExit(pod: Pod, status: PodStatus | undefined, container: string): number | undefined {
  const cs = status?.containerStatuses?.find((c) => c.name === container);
  if (!cs) return undefined;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const ended = cs.state?.terminated;
  if (ended) return policy === 'OnFailure' && ended.exitCode !== 0 ? undefined : ended.exitCode;
  if (policy === 'Always' && cs.lastState?.terminated) return cs.lastState.terminated.exitCode;
  return undefined;
}

/** A container's latest exit code: its terminated state's, else (restarting, in back-off) its last state's. */
export function containerExitCode(status: PodStatus | undefined, container: string): number | undefined {
  const cs = status?.containerStatuses?.find((c) => c.name === container);
  return cs?.state?.terminated?.exitCode ?? cs?.lastState?.terminated?.exitCode;
}

/** True when every regular container (init containers aside) is currently Running. */
export function allContainersRunning(pod: Pod, status: PodStatus): boolean {
  const statuses = new Map((status.containerStatuses ?? []).map((s) => [s.name, s]));
  return (pod.spec?.containers ?? []).every((c) => !!statuses.get(c.name)?.state?.running);
}

function conditionIs(status: PodStatus | undefined, type: string, want: string): boolean {
  return (status?.conditions ?? []).some((c) => c.type.toLowerCase() === type.toLowerCase() && c.status.toLowerCase() === want.toLowerCase());
}

const shownMode: Record<Exclude<PodWaitMode, 'auto'>, string> = { running: 'running', ready: 'ready', completed: 'completed' };

/** What a pod is waited for, in messages: `ready`, `condition Ready=true`, `{.status.phase}=Running`. */
export function targetText(target: WaitTarget, pod?: Pod): string {
  switch (target.kind) {
    case 'mode':
      return shownMode[pod ? resolvePodMode(pod, target.mode) : target.mode === 'auto' ? 'running' : target.mode];
    case 'condition':
      return `condition ${target.type}=${target.status}`;
    case 'jsonpath':
      return target.value === undefined ? `${target.path} to exist` : `${target.path}=${target.value}`;
    case 'delete':
      return 'deleted';
    case 'exit':
      return 'finished';
  }
}

/**
 * The pod's wait for a target. Under every target but deletion, a Failed pod and a pod that cannot
 * succeed fail at once; a Succeeded pod ends the podvisor modes (as the kubelet's run-once does)
 * and fails a condition it does not hold, since a finished pod changes no more.
 */
export function podWait(target: WaitTarget): ObjectWait<Pod> {
  return (pod, events) => {
    const status = pod.status;
    if (target.kind === 'delete') return 'wait';
    if (target.kind === 'jsonpath') {
      const found = jsonPathValues(target.path, pod);
      if (target.value === undefined ? found.length > 0 : found.some((v) => jsonPathText(v) === target.value)) return 'done';
    }
    if (target.kind === 'condition' && conditionIs(status, target.type, target.status)) return 'done';
    if (target.kind === 'exit') {
      const code = containerExit(pod, status, target.container);
      if (code !== undefined) return code === 0 ? 'done' : { fail: `container ${target.container} exited with code ${code}` };
    }
    if (status?.phase === 'Failed') {
      const why = [status.reason, status.message].filter(Boolean).join(': ');
      return { fail: `pod failed${why ? `: ${why}` : ''}` };
    }
    if (status?.phase === 'Succeeded')
      return target.kind === 'mode' || target.kind === 'exit' ? 'done' : { fail: `pod has completed (Succeeded): it will not be ${targetText(target)}` };
    const hopeless = cannotSucceed(status, events);
    if (hopeless) return { fail: `cannot become ${targetText(target, pod)}: ${hopeless}` };
    if (target.kind !== 'mode' || !status) return 'wait';
    const mode = resolvePodMode(pod, target.mode);
    if (mode === 'running' && allContainersRunning(pod, status)) return 'done';
    if (mode === 'ready' && conditionIs(status, 'Ready', 'True')) return 'done';
    return 'wait';
  };
}

/**
 * How long a met podvisor mode must keep holding for the same container instances before it
 * counts, as run's settle check (a crashing container caught in one of its short runs is not
 * running): the kubelet's first retry delay, five of them for `auto` judging a pod by Running.
 * kubectl's forms count at once.
 */
export function settleMsOf(target: WaitTarget, pod: Pod): number {
  if (target.kind !== 'mode') return 0;
  const mode = resolvePodMode(pod, target.mode);
  if (mode === 'completed') return 0;
  return target.mode === 'auto' && mode === 'running' ? 5000 : 1000;
}

/**
 * Since when (ms) the pod's container instances have been running as they are, and its Ready
 * condition True when it is: the latest of their start times. A hold of settleMs counts from here,
 * so a pod whose containers have run for a while is taken at once. The API's times are whole
 * seconds, so each is taken as the end of its second (the hold is never shortened).
 */
export function heldSinceMs(status: PodStatus | undefined): number {
  const endOfSecond = (t: string | null | undefined) => {
    const ms = t ? Date.parse(t) : NaN;
    if (Number.isNaN(ms)) return Infinity;
    return /\.\d/.test(t!) ? ms : ms + 999;
  };
  let since = -Infinity;
  for (const c of [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])]) {
    if (c.state?.running) since = Math.max(since, endOfSecond(c.state.running.startedAt));
  }
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') since = Math.max(since, endOfSecond(ready.lastTransitionTime));
  return since === -Infinity ? Infinity : since;
}

/** The identity of a pod's container instances: it changes when one restarts. */
export function instancesKey(status: PodStatus | undefined): string {
  return [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])]
    .map((c) => `${c.name}=${c.containerID ?? ''}/${c.restartCount ?? 0}`)
    .join(',');
}

/** A short account of what a pod still lacks, for progress lines. */
export function pendingText(pod: Pod, target: WaitTarget): string {
  const status = pod.status;
  if (!status) return 'not started yet';
  if (target.kind === 'exit') {
    const cs = status.containerStatuses?.find((c) => c.name === target.container);
    const st = cs?.state;
    if (st?.running) return `container ${target.container} running`;
    if (st?.terminated) return `container ${target.container} exited with code ${st.terminated.exitCode}, to be restarted`;
    if (st?.waiting?.reason && st.waiting.reason !== 'PodInitializing') return `container ${target.container} ${st.waiting.reason}`;
  }
  for (const [list, init] of [
    [status.initContainerStatuses ?? [], true],
    [status.containerStatuses ?? [], false],
  ] as const) {
    for (const cs of list) {
      const w = cs.state?.waiting;
      if (w?.reason && w.reason !== 'PodInitializing') return `${containerLabel(cs, init)} ${w.reason}`;
      if (cs.state?.running && !cs.ready && !init && target.kind === 'mode' && resolvePodMode(pod, target.mode) === 'ready')
        return `${containerLabel(cs, init)} not ready`;
    }
  }
  return status.phase ?? 'Pending';
}

/** The width progress lines are cut to when stderr is not a terminal. */
export const progressWidth = 160;

/** Cuts a progress line to fit one terminal line of `width` columns. */
export function oneTerminalLine(text: string, width = progressWidth): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length < width ? flat : `${flat.slice(0, Math.max(1, width - 2))}…`;
}

/** The fields of a workload the engine reads (apps/v1 and batch/v1 kinds share their shape). */
export interface WorkloadObject {
  kind?: string;
  metadata?: { name?: string; generation?: number };
  spec?: {
    replicas?: number;
    completions?: number;
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    desiredNumberScheduled?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    succeeded?: number;
    failed?: number;
    active?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** A workload's condition of a type, when it is True. */
function trueCondition(o: WorkloadObject, type: string) {
  return (o.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');
}

/**
 * Where a workload's rollout stands, in `kubectl rollout status` words (its status viewers, with the
 * same messages): `done` once rolled out, `fail` when it never will be, else the line to show.
 */
export function rolloutStatus(o: WorkloadObject): { state: 'wait' | 'done'; text: string } | { state: 'fail'; text: string } {
  const name = o.metadata?.name ?? '';
  const s = o.status ?? {};
  const observed = (o.metadata?.generation ?? 0) <= (s.observedGeneration ?? 0) && s.observedGeneration !== undefined;
  const want = o.spec?.replicas ?? 1;
  switch (o.kind) {
    case 'Deployment': {
      if (!observed) return { state: 'wait', text: 'Waiting for deployment spec update to be observed...' };
      const progressing = (s.conditions ?? []).find((c) => c.type === 'Progressing');
      if (progressing?.reason === 'ProgressDeadlineExceeded') return { state: 'fail', text: `deployment "${name}" exceeded its progress deadline` };
      const replicaFailure = trueCondition(o, 'ReplicaFailure');
      if (replicaFailure) return { state: 'fail', text: `deployment "${name}" cannot create its pods: ${replicaFailure.reason}: ${replicaFailure.message}` };
      const updated = s.updatedReplicas ?? 0;
      const waiting = `Waiting for deployment "${name}" rollout to finish: `;
      if (updated < want) return { state: 'wait', text: `${waiting}${updated} out of ${want} new replicas have been updated...` };
      if ((s.replicas ?? 0) > updated) return { state: 'wait', text: `${waiting}${(s.replicas ?? 0) - updated} old replicas are pending termination...` };
      if ((s.availableReplicas ?? 0) < updated)
        return { state: 'wait', text: `${waiting}${s.availableReplicas ?? 0} of ${updated} updated replicas are available...` };
      return { state: 'done', text: `deployment "${name}" successfully rolled out` };
    }
    case 'StatefulSet': {
      if (!observed) return { state: 'wait', text: 'Waiting for statefulset spec update to be observed...' };
      if ((s.readyReplicas ?? 0) < want) return { state: 'wait', text: `Waiting for ${want - (s.readyReplicas ?? 0)} pods to be ready...` };
      const partition = o.spec?.updateStrategy?.type === 'RollingUpdate' ? (o.spec.updateStrategy.rollingUpdate?.partition ?? 0) : 0;
      if (partition > 0) {
        if ((s.updatedReplicas ?? 0) < want - partition)
          return {
            state: 'wait',
            text: `Waiting for partitioned roll out to finish: ${s.updatedReplicas ?? 0} out of ${want - partition} new pods have been updated...`,
          };
        return { state: 'done', text: `partitioned roll out complete: ${s.updatedReplicas ?? 0} new pods have been updated...` };
      }
      if (s.updateRevision !== s.currentRevision)
        return {
          state: 'wait',
          text: `waiting for statefulset rolling update to complete ${s.updatedReplicas ?? 0} pods at revision ${s.updateRevision ?? ''}...`,
        };
      return {
        state: 'done',
        text: `statefulset rolling update complete ${s.currentRevision ? `${s.replicas ?? 0} pods at revision ${s.currentRevision}...` : ''}`.trim(),
      };
    }
    case 'DaemonSet': {
      if (!observed) return { state: 'wait', text: 'Waiting for daemon set spec update to be observed...' };
      const desired = s.desiredNumberScheduled ?? 0;
      const waiting = `Waiting for daemon set "${name}" rollout to finish: `;
      if ((s.updatedNumberScheduled ?? 0) < desired)
        return { state: 'wait', text: `${waiting}${s.updatedNumberScheduled ?? 0} out of ${desired} new pods have been updated...` };
      if ((s.numberAvailable ?? 0) < desired) return { state: 'wait', text: `${waiting}${s.numberAvailable ?? 0} of ${desired} updated pods are available...` };
      return { state: 'done', text: `daemon set "${name}" successfully rolled out` };
    }
    case 'ReplicaSet': {
      const replicaFailure = trueCondition(o, 'ReplicaFailure');
      if (replicaFailure) return { state: 'fail', text: `replicaset "${name}" cannot create its pods: ${replicaFailure.reason}: ${replicaFailure.message}` };
      if (!observed) return { state: 'wait', text: 'Waiting for replica set spec update to be observed...' };
      if ((s.availableReplicas ?? 0) < want)
        return { state: 'wait', text: `Waiting for replica set "${name}": ${s.availableReplicas ?? 0} of ${want} replicas are available...` };
      return { state: 'done', text: `replica set "${name}" has ${want} available replicas` };
    }
    case 'Job': {
      const failed = trueCondition(o, 'Failed');
      if (failed) return { state: 'fail', text: `job "${name}" failed: ${[failed.reason, failed.message].filter(Boolean).join(': ')}` };
      if (trueCondition(o, 'Complete')) return { state: 'done', text: `job "${name}" completed (${s.succeeded ?? 0} succeeded)` };
      const completions = o.spec?.completions ?? 1;
      return {
        state: 'wait',
        text: `Waiting for job "${name}": ${s.succeeded ?? 0}/${completions} completions, ${s.active ?? 0} active, ${s.failed ?? 0} failed...`,
      };
    }
    default:
      // CronJobs, Services and the other kinds have nothing to roll out: applied is done.
      return { state: 'done', text: `${(o.kind ?? 'object').toLowerCase()} "${name}" applied` };
  }
}

/** The kinds whose controllers report a refused pod creation only as their FailedCreate event (no ReplicaFailure condition). */
const creationEventKinds = new Set(['Job', 'StatefulSet', 'DaemonSet']);

/** Whether an event is a controller's report of a pod creation (FailedCreate or SuccessfulCreate, controller_utils' RealPodControl). */
export function isCreationEvent(e: WaitEvent): boolean {
  return e.reason === 'FailedCreate' || e.reason === 'SuccessfulCreate';
}

/**
 * Why a Job, StatefulSet or DaemonSet cannot roll out when its controller's latest pod creation
 * (its last creation event) was refused: the refusal stands until the template or what refused it
 * changes, so waiting longer cannot help. Undefined while it may still succeed.
 */
export function refusedCreation(o: WorkloadObject, lastCreation: WaitEvent | undefined): string | undefined {
  if (!creationEventKinds.has(o.kind ?? '') || lastCreation?.reason !== 'FailedCreate') return undefined;
  return `${(o.kind ?? '').toLowerCase()} "${o.metadata?.name ?? ''}" cannot create its pods: FailedCreate: ${lastCreation.message ?? ''}`;
}

/**
 * How a workload is waited for, as `kubectl rollout status` (Deployments, StatefulSets, DaemonSets;
 * a ReplicaSet until its replicas are available) and `kubectl wait --for=condition=complete` (a Job,
 * failing at once on its Failed condition); other kinds are done once applied. The pods of a
 * workload are judged by the caller with cannotSucceed.
 */
export const workloadWait: ObjectWait<WorkloadObject> = (obj) => {
  const r = rolloutStatus(obj);
  return r.state === 'fail' ? { fail: r.text } : r.state;
};
