// `run --exit-code-from` (compose's meaning): the pod or Job whose container exit code becomes the
// command's — `POD[/CONTAINER]` a pod of the manifests, `job/NAME[/CONTAINER]` (or a bare name that
// is a Job's) the Job's last finished pod —, and which of the agent's pods a run owns (its bare pods
// and those its workloads' controllers made), for `--logs`.

import type { Pod } from '../api/types.js';
import { containerExitCode } from '../kubelet/wait-engine.js';
import type { LoadedManifests } from '../config/load.js';
import type { AppliedRef } from './object-paths.js';

export interface ExitTarget {
  kind: 'Pod' | 'Job';
  ns: string;
  name: string;
  /** The container whose exit code counts; the first one unless named. */
  container?: string;
}

/** The target --exit-code-from names in these manifests, or the error that says why there is none. */
export function resolveExitTarget(spec: string, loaded: LoadedManifests): ExitTarget | { error: string } {
  const jobPrefix = /^(job|jobs|job\.batch)\//.exec(spec);
  const [name = '', container] = (jobPrefix ? spec.slice(jobPrefix[0].length) : spec).split('/', 2);
  const withContainer = (t: ExitTarget): ExitTarget => (container ? { ...t, container } : t);
  const job = loaded.objects.find((o) => o.kind === 'Job' && o.metadata?.name === name);
  const jobTarget = () => {
    const containers = (job as { spec?: { template?: { spec?: { containers?: { name: string }[] } } } } | undefined)?.spec?.template?.spec?.containers ?? [];
    const missing = noSuchContainer(`job.batch/${name}`, containers, container);
    return missing ?? withContainer({ kind: 'Job', ns: job!.metadata?.namespace ?? 'default', name });
  };
  if (jobPrefix) return job ? jobTarget() : { error: `--exit-code-from: no Job "${name}" in the manifests` };
  const pod = loaded.pods.find((p) => p.metadata?.name === name);
  if (pod)
    return (
      noSuchContainer(`pod/${name}`, pod.spec?.containers ?? [], container) ?? withContainer({ kind: 'Pod', ns: pod.metadata?.namespace ?? 'default', name })
    );
  if (job) return jobTarget();
  return { error: `--exit-code-from: no ${loaded.objects.length ? 'pod or Job' : 'pod'} "${name}" in the manifests` };
}

/** The error for a container that is not one of the regular containers (init containers end before the pod runs). */
function noSuchContainer(what: string, containers: readonly { name: string }[], container: string | undefined): { error: string } | undefined {
  if (container === undefined || containers.some((c) => c.name === container)) return undefined;
  return { error: `--exit-code-from: ${what} has no container "${container}" (its containers: ${containers.map((c) => c.name).join(', ')})` };
}

const controllerOf = (p: Pod) => (p.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
const finishedAt = (p: Pod) => Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => Date.parse(c.state?.terminated?.finishedAt ?? '') || 0));

/** The pod whose exit code counts: the named pod, or the Job's Succeeded pod, else its last Failed one. */
export function exitPodOf(target: ExitTarget, pods: readonly Pod[]): Pod | undefined {
  const inNs = pods.filter((p) => (p.metadata?.namespace ?? 'default') === target.ns);
  if (target.kind === 'Pod') return inNs.find((p) => p.metadata?.name === target.name && !controllerOf(p));
  const ofJob = inNs.filter((p) => {
    const owner = controllerOf(p);
    return owner?.kind === 'Job' && owner.name === target.name;
  });
  const succeeded = ofJob.find((p) => p.status?.phase === 'Succeeded');
  if (succeeded) return succeeded;
  return ofJob.filter((p) => p.status?.phase === 'Failed').sort((a, b) => finishedAt(b) - finishedAt(a))[0];
}

/** The exit code of the target's container, or why there is none (it never ended, no such container). */
export function exitCodeOf(target: ExitTarget, pods: readonly Pod[]): number | { error: string } {
  const what = target.kind === 'Job' ? `job.batch/${target.name}` : `pod/${target.name}`;
  const pod = exitPodOf(target, pods);
  if (!pod) return { error: `--exit-code-from: ${what} ${target.kind === 'Job' ? 'has no finished pod' : 'is gone'}` };
  const name = target.container ?? pod.spec?.containers[0]?.name;
  const cs = pod.status?.containerStatuses?.find((c) => c.name === name);
  const code = containerExitCode(pod.status, name ?? '');
  if (code !== undefined) return code;
  return { error: `--exit-code-from: container ${name ?? ''} of pod/${pod.metadata?.name ?? ''} did not finish${cs ? '' : ' (no such container)'}` };
}

/**
 * Whether a pod belongs to what a run applied: a bare pod of the manifests, or one a controller of
 * an applied workload made (a Deployment's through its ReplicaSet `<name>-<pod-template-hash>`, a
 * CronJob's through its Job `<name>-<scheduled minute>`).
 */
export function ownedByRun(pod: Pod, loaded: LoadedManifests, applied: readonly AppliedRef[]): boolean {
  const ns = pod.metadata?.namespace ?? 'default';
  const owner = controllerOf(pod);
  if (!owner) return loaded.pods.some((p) => p.metadata?.name === pod.metadata?.name && (p.metadata?.namespace ?? 'default') === ns);
  const appliedAs = (kind: string, name: string) => applied.some((r) => r.kind === kind && r.ns === ns && r.name === name);
  if (appliedAs(owner.kind, owner.name)) return true;
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash) return applied.some((r) => r.kind === 'Deployment' && r.ns === ns && owner.name === `${r.name}-${hash}`);
  if (owner.kind === 'Job')
    return applied.some((r) => r.kind === 'CronJob' && r.ns === ns && /^\d+$/.test(owner.name.slice(r.name.length + 1)) && owner.name.startsWith(`${r.name}-`));
  return false;
}
