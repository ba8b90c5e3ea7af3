// A Job's podFailurePolicy applied to a failed pod (pkg/controller/job/pod_failure_policy.go,
// matchPodFailurePolicy): the first rule whose onExitCodes (a non-zero exit code of an app or init
// container, In or NotIn the values, of the named container when given) or onPodConditions (a pod
// condition of that type and status) matches decides: FailJob, Ignore or Count. No rule: Count.

import type { Job, Pod } from '../api/types.js';

type Policy = NonNullable<Job['spec']>['podFailurePolicy'];
type ContainerStatus = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];

export interface PodFailureJudgement {
  action: 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';
  /** The Failed condition's message of a FailJob rule. */
  message?: string;
}

export function matchPodFailurePolicy(policy: Policy, pod: Pod): PodFailureJudgement {
  const ns = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  for (const [index, rule] of (policy?.rules ?? []).entries()) {
    const action = rule.action as PodFailureJudgement['action'];
    if (rule.onExitCodes) {
      const req = rule.onExitCodes;
      const matching = (list: ContainerStatus[] | undefined) =>
        (list ?? []).find((c) => {
          const code = c.state?.terminated?.exitCode;
          if (code === undefined || code === 0) return false;
          if (req.containerName && req.containerName !== c.name) return false;
          return req.operator === 'In' ? req.values.includes(code) : !req.values.includes(code);
        });
      const c = matching(pod.status?.containerStatuses) ?? matching(pod.status?.initContainerStatuses);
      if (!c) continue;
      if (action !== 'FailJob') return { action };
      return {
        action,
        message: `Container ${c.name} for pod ${ns}/${name} failed with exit code ${c.state!.terminated!.exitCode} matching FailJob rule at index ${index}`,
      };
    } else if (rule.onPodConditions?.length) {
      const cond = rule.onPodConditions
        .map((pattern) => (pod.status?.conditions ?? []).find((c) => c.type === pattern.type && c.status === (pattern.status || 'True')))
        .find((c) => c !== undefined);
      if (!cond) continue;
      if (action !== 'FailJob') return { action };
      return { action, message: `Pod ${ns}/${name} has condition ${cond.type} matching FailJob rule at index ${index}` };
    }
  }
  return { action: 'Count' };
}
