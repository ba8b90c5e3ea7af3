// Which runtime `up -f`/`run -f` use when --runtime is not given, decided from the manifests and the
// host: a container without a command runs its image's entrypoint, which only containerd can read, so
// such manifests get the containerd podvisor starts when this host can run it; otherwise the process
// runtime (whose validation then refuses those containers, naming the fix).

import type { Container, Pod, PodSpec } from '../api/types.js';
import type { ManifestObject } from '../config/object-kinds.js';
import { qualifiedName } from '../config/object-kinds.js';
import { MIXED_RUNTIME, PROCESS_HANDLER } from '../runtime/pod-rules.js';

/** A container of the manifests: where it is written, and its command. */
export interface ManifestContainer {
  /** `pod/web: container nginx`, `deployment.apps/web: container app` */
  where: string;
  command?: string[];
  /** Its pod's runtimeClassName, when set. */
  runtimeClassName?: string;
}

export interface RuntimeChoice {
  runtime: 'process' | 'containerd' | typeof MIXED_RUNTIME;
  /** Why, in a clause (the line said is `runtime: <runtime> (<why>)`). */
  why: string;
}

/** The pod spec of a workload's template (a CronJob's through its job template). */
function templateSpec(o: ManifestObject): PodSpec | undefined {
  const spec = o.spec as { template?: { spec?: PodSpec }; jobTemplate?: { spec?: { template?: { spec?: PodSpec } } } } | undefined;
  return spec?.template?.spec ?? spec?.jobTemplate?.spec?.template?.spec;
}

function containersOf(owner: string, spec: PodSpec | undefined): ManifestContainer[] {
  const all: Container[] = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  const runtimeClassName = spec?.runtimeClassName;
  return all.map((c) => ({
    where: `${owner}: container ${c.name}`,
    ...(c.command ? { command: [...c.command] } : {}),
    ...(runtimeClassName ? { runtimeClassName } : {}),
  }));
}

/** Every container of the pods and of the workloads' templates. */
export function manifestContainers(pods: readonly Pod[], objects: readonly ManifestObject[]): ManifestContainer[] {
  return [
    ...pods.flatMap((p) => containersOf(`pod/${p.metadata?.name ?? ''}`, p.spec)),
    ...objects.flatMap((o) => containersOf(qualifiedName(o), templateSpec(o))),
  ];
}

const LISTED = 3;

/**
 * The runtime for manifests when none was asked for: undefined while every container has a command
 * (the default process runtime runs them, nothing to say); containerd when some have none and the
 * host can run it (hostProblems empty); else the process runtime, saying why containerd cannot.
 */
export function chooseRuntime(containers: readonly ManifestContainer[], hostProblems: readonly string[]): RuntimeChoice | undefined {
  const bare = containers.filter((c) => !c.command?.length);
  if (!bare.length) return undefined;
  const names = bare
    .slice(0, LISTED)
    .map((c) => c.where)
    .join(', ');
  const which = `${bare.length} container${bare.length === 1 ? ' has' : 's have'} no command (${names}${bare.length > LISTED ? ', …' : ''})`;
  if (!hostProblems.length) {
    // Pods of RuntimeClass `process` beside them run as host processes on the same agent.
    const hosted = containers.filter((c) => c.runtimeClassName === PROCESS_HANDLER).length;
    if (hosted)
      return {
        runtime: MIXED_RUNTIME,
        why: `${which}: they run their images' entrypoints, on the containerd podvisor starts; ${hosted === 1 ? '1 container of RuntimeClass process runs as a host process' : `${hosted} containers of RuntimeClass process run as host processes`}`,
      };
    return { runtime: 'containerd', why: `${which}: they run their images' entrypoints, on the containerd podvisor starts` };
  }
  return { runtime: 'process', why: `${which}, and containerd cannot run here: ${hostProblems.join('; ')}` };
}
