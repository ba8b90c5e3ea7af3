// Builders for the status tests: pods, runtime container instances and v1 container statuses.

import type { Container, ContainerStatus, Pod } from '../../src/api/types.js';
import type { ContainerStatus as RuntimeContainerStatus, PodSandboxStatus } from '../../src/runtime/cri.js';

export const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

export function container(name: string, extra: Partial<Container> = {}): Container {
  return { name, image: `img/${name}`, command: ['sleep', '1000'], ...extra };
}

export function sidecar(name: string, extra: Partial<Container> = {}): Container {
  return container(name, { restartPolicy: 'Always', ...extra });
}

export function pod(opts: {
  containers?: Container[];
  initContainers?: Container[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  readinessGates?: string[];
  deleting?: boolean;
  name?: string;
}): Pod {
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: opts.name ?? 'web',
      namespace: 'default',
      uid: 'uid-1',
      ...(opts.deleting ? { deletionTimestamp: '2026-12-02T12:10:00Z' } : {}),
    },
    spec: {
      containers: opts.containers ?? [container('app')],
      restartPolicy: opts.restartPolicy ?? 'Always',
    },
  };
  if (opts.initContainers) p.spec!.initContainers = opts.initContainers;
  if (opts.readinessGates) p.spec!.readinessGates = opts.readinessGates.map((conditionType) => ({ conditionType }));
  return p;
}

let seq = 0;
/** A runtime instance; times are seconds after T0. */
export function instance(
  name: string,
  state: RuntimeContainerStatus['state'],
  opts: { attempt?: number; created?: number; started?: number; finished?: number; exitCode?: number; reason?: string; message?: string; id?: string } = {},
): RuntimeContainerStatus {
  const attempt = opts.attempt ?? 0;
  const created = opts.created ?? attempt * 10;
  return {
    id: opts.id ?? `${name}-${attempt}-${seq++}`,
    podSandboxId: 'sb-1',
    metadata: { name, attempt },
    state,
    createdAt: T0 + created * 1000,
    startedAt: state === 'CONTAINER_CREATED' ? 0 : T0 + (opts.started ?? created + 1) * 1000,
    finishedAt: state === 'CONTAINER_EXITED' ? T0 + (opts.finished ?? created + 5) * 1000 : 0,
    exitCode: opts.exitCode ?? 0,
    image: `img/${name}`,
    imageRef: `sha256:${name}`,
    reason: opts.reason ?? (state === 'CONTAINER_EXITED' ? (opts.exitCode ? 'Error' : 'Completed') : ''),
    message: opts.message ?? '',
    labels: {},
    annotations: {},
    logPath: `/tmp/${name}/${attempt}.log`,
  };
}

export function sandbox(ready = true): PodSandboxStatus {
  return {
    id: 'sb-1',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1', attempt: 0 },
    state: ready ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
    createdAt: T0,
    network: { ip: '127.0.0.1', additionalIps: [] },
  };
}

/** v1 container statuses for the pure phase/condition tables. */
export const st = {
  running(name: string, extra: Partial<ContainerStatus> = {}): ContainerStatus {
    return { name, image: 'i', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: '2026-12-02T12:00:00Z' } }, ...extra };
  },
  terminated(name: string, exitCode: number, extra: Partial<ContainerStatus> = {}): ContainerStatus {
    return { name, image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode } }, ...extra };
  },
  waiting(name: string, lastExitCode?: number, extra: Partial<ContainerStatus> = {}): ContainerStatus {
    const s: ContainerStatus = { name, image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } }, ...extra };
    if (lastExitCode !== undefined) s.lastState = { terminated: { exitCode: lastExitCode } };
    return s;
  },
  empty(name: string): ContainerStatus {
    return { name, image: 'i', imageID: '', ready: false, restartCount: 0, state: {} };
  },
};
