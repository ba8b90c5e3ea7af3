// Builds the runtime's ContainerConfig for one start of a container, as the kubelet's
// generateContainerConfig does: environment, expanded command/args, working dir, log path, labels.

import type { ConfigMap, Container, Pod, Secret } from '../api/types.js';
import type { ContainerConfig, KeyValue } from '../runtime/cri.js';
import { checkExecSize, expandBounded, makeEnvironmentVariables, mappingFuncFor, type NodeAllocatable } from './envvars.js';
import { totalmem } from 'node:os';
import { containerSecurityContext, linuxContainerResources, verifyRunAsNonRoot } from './linux-config.js';

export { ContainerConfigError, type NodeAllocatable } from './envvars.js';

/** Label and annotation keys the kubelet puts on every container (kuberuntime labels.go). */
export const LABEL_POD_NAME = 'io.kubernetes.pod.name';
export const LABEL_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const LABEL_POD_UID = 'io.kubernetes.pod.uid';
export const LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';
export const ANNOTATION_CONTAINER_HASH = 'io.kubernetes.container.hash';
export const ANNOTATION_RESTART_COUNT = 'io.kubernetes.container.restartCount';
export const ANNOTATION_TERMINATION_MESSAGE_PATH = 'io.kubernetes.container.terminationMessagePath';
export const ANNOTATION_TERMINATION_MESSAGE_POLICY = 'io.kubernetes.container.terminationMessagePolicy';

export interface BuildContainerConfigInput {
  pod: Pod;
  container: Container;
  /** The restart count this start will have (names the log file `<container>/<attempt>.log`). */
  attempt: number;
  /** The pod's sandbox directory, the working directory when the container sets none. */
  sandboxDir: string;
  podIP: string;
  hostIP: string;
  lookup: {
    configMap(ns: string, name: string): ConfigMap | undefined;
    secret(ns: string, name: string): Secret | undefined;
  };
  /** Node allocatable for resourceFieldRef of unset limits; the host's CPUs and memory by default. */
  nodeAllocatable?: NodeAllocatable;
  /** The user a container runs as when runAsUser is unset (the process runtime: the agent's). */
  imageUid?: number;
  /** Node memory capacity in bytes, for the OOM score adjustment (the host's when unset). */
  memoryCapacity?: number;
}

/** Throws ContainerConfigError (→ `CreateContainerConfigError`) when a reference cannot be resolved. */
export function buildContainerConfig(input: BuildContainerConfigInput): ContainerConfig {
  const { pod, container, attempt } = input;
  const meta = pod.metadata ?? {};
  const env = makeEnvironmentVariables({
    pod,
    container,
    podIP: input.podIP,
    hostIP: input.hostIP,
    lookup: input.lookup,
    nodeAllocatable: input.nodeAllocatable,
    sandboxDir: input.sandboxDir,
  });

  // ExpandContainerCommandAndArgs: references resolve against the final environment.
  const mapping = mappingFuncFor(env);
  const command = (container.command ?? []).map((c, i) => expandBounded(c, mapping, `command[${i}]`));
  const args = (container.args ?? []).map((a, i) => expandBounded(a, mapping, `args[${i}]`));
  checkExecSize(env, [...command, ...args]);

  // The runtime sets HOSTNAME from the sandbox hostname before the container's own variables, so a
  // variable the pod defines wins; it is not visible to $(VAR) expansion, as in Kubernetes.
  const envs: KeyValue[] = [];
  if (!env.has('HOSTNAME')) envs.push({ key: 'HOSTNAME', value: podHostname(pod) });
  for (const [key, value] of env) envs.push({ key, value });

  const config: ContainerConfig = {
    metadata: { name: container.name, attempt },
    image: container.image ?? '',
    command,
    args,
    workingDir: container.workingDir || input.sandboxDir,
    envs,
    logPath: `${container.name}/${attempt}.log`,
    labels: {
      [LABEL_POD_NAME]: meta.name ?? '',
      [LABEL_POD_NAMESPACE]: meta.namespace || 'default',
      [LABEL_POD_UID]: meta.uid ?? '',
      [LABEL_CONTAINER_NAME]: container.name,
    },
    annotations: {
      [ANNOTATION_CONTAINER_HASH]: hashContainer(container),
      [ANNOTATION_RESTART_COUNT]: String(attempt),
      [ANNOTATION_TERMINATION_MESSAGE_PATH]: container.terminationMessagePath ?? '/dev/termination-log',
      [ANNOTATION_TERMINATION_MESSAGE_POLICY]: container.terminationMessagePolicy ?? 'File',
    },
  };
  // Without an image, the user a container runs as unless told is the agent's own.
  const imageUid = input.imageUid ?? process.getuid?.() ?? 0;
  verifyRunAsNonRoot(pod, container, { id: '', repoTags: [], repoDigests: [], size: 0, uid: imageUid });
  config.linux = {
    resources: linuxContainerResources(pod, container, input.memoryCapacity ?? totalmem()),
    securityContext: containerSecurityContext(pod, container),
  };
  const stopSignal = container.lifecycle?.stopSignal;
  if (stopSignal) config.stopSignal = stopSignal as NodeJS.Signals;
  // The container's own stdin and terminal, which `attach -i`/`-t` reach (the runtime keeps them).
  if (container.stdin) config.stdin = true;
  if (container.stdinOnce) config.stdinOnce = true;
  if (container.tty) config.tty = true;
  return config;
}

/** The sandbox hostname: spec.hostname when set, else the pod name. */
/** The longest hostname sethostname(2) takes (64 bytes with the terminating NUL). */
export const HOSTNAME_MAX_LENGTH = 63;

/**
 * The pod's hostname, as GeneratePodHostNameAndDomain: spec.hostname, else the pod's name, cut to 63
 * characters without a trailing '-' or '.' (truncatePodHostnameIfNeeded): a pod name may be up to
 * 253 characters, a hostname may not.
 */
export function podHostname(pod: Pod): string {
  return truncateHostname(pod.spec?.hostname || pod.metadata?.name || '');
}

/** truncatePodHostnameIfNeeded: the first 63 characters, with trailing '-' and '.' removed. */
export function truncateHostname(hostname: string): string {
  if (hostname.length <= HOSTNAME_MAX_LENGTH) return hostname;
  return hostname.slice(0, HOSTNAME_MAX_LENGTH).replace(/[-.]+$/, '');
}

/**
 * Hex FNV-1a (32-bit) of the container spec in canonical JSON (keys sorted), as the kubelet's
 * HashContainer: any change to the spec gives another hash, hence a fresh back-off key.
 */
export function hashContainer(container: Container): string {
  return fnv32a(canonicalJSON(container)).toString(16);
}

function canonicalJSON(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJSON(obj[k])}`).join(',')}}`;
}

function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(s, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
