// Starting one container (§11.1, kuberuntime startContainer behind the doBackOff check): back-off,
// config, create, start, postStart; each failure becomes the kubelet's event and the start result
// (reason + message) that feeds the reason cache.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import type { Image, PodSandboxConfig } from '../runtime/cri.js';
import { pruneContainerLogs } from '../runtime/logs/prune.js';
import type { StartFailure } from '../status/reason-cache.js';
import { doBackOff, type Backoff } from './backoff.js';
import { buildContainerConfig, hashContainer, type BuildContainerConfigInput } from './container-config.js';
import { containerRef, formatPod } from './format.js';
import { abortable, runLifecycleHandler } from './hooks.js';
import { killContainer, type KillDeps } from './kill.js';
import type { RuntimePod } from './pod-actions.js';
import type { PodRuntimeSupport } from './runtime-support.js';

export type ObjectLookup = BuildContainerConfigInput['lookup'];

export interface StartDeps extends KillDeps {
  backoff: Backoff;
  lookup: ObjectLookup;
  hostIP: string;
  nodeAllocatable?: BuildContainerConfigInput['nodeAllocatable'];
  /** Images, volumes and Linux config, for a runtime that has them. */
  podRuntime?: PodRuntimeSupport;
}

export interface SandboxInfo {
  id: string;
  config: PodSandboxConfig;
  /** The pod's sandbox directory (default working directory). */
  dir: string;
  podIP: string;
}

export type StartResult =
  | { ok: true }
  | (StartFailure & {
      ok: false;
      /** For CrashLoopBackOff: when the back-off ends (ms since epoch). */
      retryAt?: number;
    });

// Start-result reasons (kubecontainer errors).
export const ErrCrashLoopBackOff = 'CrashLoopBackOff';
export const ErrCreateContainerConfig = 'CreateContainerConfigError';
export const ErrCreateContainer = 'CreateContainerError';
export const ErrRunContainer = 'RunContainerError';
export const ErrPostStartHook = 'PostStartHookError';

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Starts container (regular, init or sidecar) unless it is in back-off. `snapshot` is the pod's
 * runtime state the sync's actions were computed from; `signal` aborts waits on hooks and kills.
 */
export async function startContainer(
  deps: StartDeps,
  sandbox: SandboxInfo,
  pod: Pod,
  container: Container,
  snapshot: RuntimePod,
  signal?: AbortSignal,
): Promise<StartResult> {
  const name = container.name;
  const ref = containerRef(pod, name);
  const specHash = hashContainer(container);

  const backOff = doBackOff(pod, container, snapshot.instances(name), deps.backoff, specHash);
  if (backOff.inBackOff) {
    deps.recorder.event(ref, 'Warning', 'BackOff', `Back-off restarting failed container ${name} in pod ${formatPod(pod)}`);
    return { ok: false, reason: ErrCrashLoopBackOff, message: backOff.message!, retryAt: backOff.expiresAt };
  }

  // Step 1 of startContainer: the image (a runtime without images has none to pull).
  let imageRef = '';
  let image: Image | undefined;
  if (deps.podRuntime) {
    const pulled = await deps.podRuntime.ensureImage(pod, container, sandbox.config);
    if (!pulled.ok) {
      deps.recorder.event(ref, 'Warning', 'Failed', `Error: ${pulled.reason}`);
      return { ok: false, reason: pulled.reason, message: pulled.message };
    }
    imageRef = pulled.imageRef;
    image = pulled.image;
  }

  const latest = snapshot.latest(name);
  const restartCount = latest ? latest.metadata.attempt + 1 : await restartCountFromLogDir(join(sandbox.config.logDirectory, name));

  let config;
  try {
    config = buildContainerConfig({
      pod,
      container,
      attempt: restartCount,
      sandboxDir: sandbox.dir,
      podIP: sandbox.podIP,
      hostIP: deps.hostIP,
      lookup: deps.lookup,
      nodeAllocatable: deps.nodeAllocatable,
    });
    if (deps.podRuntime) config = await deps.podRuntime.containerConfig(pod, container, config, { imageRef, image, podIP: sandbox.podIP });
  } catch (e) {
    deps.recorder.event(ref, 'Warning', 'Failed', `Error: ${messageOf(e)}`);
    return { ok: false, reason: ErrCreateContainerConfig, message: messageOf(e) };
  }

  let id: string;
  try {
    id = await deps.runtime.createContainer(sandbox.id, config, sandbox.config);
  } catch (e) {
    deps.recorder.event(ref, 'Warning', 'Failed', `Error: ${messageOf(e)}`);
    return { ok: false, reason: ErrCreateContainer, message: messageOf(e) };
  }
  deps.recorder.event(ref, 'Normal', 'Created', `Created container: ${name}`);
  // The current and the previous instance keep their logs; older ones go, as the kubelet's GC removes them.
  if (sandbox.config.logDirectory) await pruneContainerLogs(join(sandbox.config.logDirectory, name), restartCount - 1);

  try {
    await deps.runtime.startContainer(id);
  } catch (e) {
    deps.recorder.event(ref, 'Warning', 'Failed', `Error: ${messageOf(e)}`);
    return { ok: false, reason: ErrRunContainer, message: messageOf(e) };
  }
  deps.recorder.event(ref, 'Normal', 'Started', `Started container ${name}`);

  const postStart = container.lifecycle?.postStart;
  if (postStart) {
    const failure = await runLifecycleHandler(
      { runtime: deps.runtime, clock: deps.clock, recorder: deps.recorder, pod, container, containerId: id, podIP: sandbox.podIP, signal },
      postStart,
    );
    if (failure !== undefined) {
      deps.logger.warn('Failed to execute PostStartHook', { pod: formatPod(pod), container: name, error: failure });
      // The details stay out of the event so that secrets cannot leak through it.
      deps.recorder.event(ref, 'Warning', 'FailedPostStartHook', 'PostStartHook failed');
      const kill = killContainer(deps, {
        pod,
        id,
        name,
        container,
        message: 'FailedPostStartHook',
        reason: 'FailedPostStartHook',
        podIP: sandbox.podIP,
      });
      try {
        await abortable(kill, signal);
      } catch (e) {
        kill.catch(() => {});
        if (!signal?.aborted)
          deps.logger.warn('Failed to kill container after PostStartHook failure', { pod: formatPod(pod), container: name, error: messageOf(e) });
      }
      return { ok: false, reason: ErrPostStartHook, message: failure };
    }
  }
  return { ok: true };
}

/**
 * calcRestartCountByLogDir: when the runtime holds no instance, the restart count continues from
 * the highest `<n>.log` in the container's log directory.
 */
export async function restartCountFromLogDir(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let count = 0;
  for (const n of names) {
    const m = /^(\d+)\.log(\..*)?/.exec(n);
    if (m) count = Math.max(count, Number(m[1]) + 1);
  }
  return count;
}
