// The Priority admission plugin for pods (plugin/pkg/admission/priority): on create, the pod's
// priorityClassName — or the global default class when it names none — resolved into spec.priority
// and spec.preemptionPolicy; a class that does not exist, or a priority or preemptionPolicy written
// by hand that differs from the class's, refused with upstream's Forbidden. On update the stored
// values are kept when the pod sent back leaves them out (validation forbids changing them).

import type { Pod } from '../api/types.js';
import { defaultClassOf, defaultPriorityWhenNoDefaultClassExists, type PreemptionPolicy, type PriorityClass } from '../api/validation/scheduling.js';
import { forbiddenObject } from '../http/status.js';
import type { Storage } from '../kubeapi/backend.js';

type Spec = NonNullable<Pod['spec']> & { priority?: number | null; preemptionPolicy?: string | null };

/** The pod's name as admission names it before name generation: its name, else its generateName. */
function admissionName(pod: Pod): string {
  return pod.metadata?.name || pod.metadata?.generateName || '';
}

/** admitPod on create; classes undefined: the store keeps no PriorityClasses (priority 0, PreemptLowerPriority, as with no default). */
export function admitPodPriority(pod: Pod, classes: Storage | undefined): void {
  const spec = pod.spec as Spec;
  const refuse = (why: string) => forbiddenObject('pods', '', admissionName(pod), why);
  let priority = defaultPriorityWhenNoDefaultClassExists;
  let policy: PreemptionPolicy | undefined = 'PreemptLowerPriority';
  if (!spec.priorityClassName) {
    const dpc = classes ? defaultClassOf(classes.list().items as PriorityClass[]) : undefined;
    if (dpc) {
      spec.priorityClassName = dpc.metadata?.name ?? '';
      priority = dpc.value;
      policy = dpc.preemptionPolicy;
    }
  } else {
    const pc = classes?.get('', spec.priorityClassName) as PriorityClass | undefined;
    if (!pc) throw refuse(`no PriorityClass with name ${spec.priorityClassName} was found`);
    priority = pc.value;
    policy = pc.preemptionPolicy;
  }
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
    throw refuse(
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    );
  }
  spec.priority = priority;
  if (policy !== undefined) {
    if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== policy) {
      throw refuse(
        `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
      );
    }
    spec.preemptionPolicy = policy;
  }
}

/** admitPod on update: what was resolved at create is kept when the pod sent back leaves it out. */
export function keepPodPriority(pod: Pod, old: Pod): void {
  const spec = pod.spec as Spec;
  const was = old.spec as Spec | undefined;
  if ((spec.priority === undefined || spec.priority === null) && was?.priority !== undefined) spec.priority = was.priority;
  if ((spec.preemptionPolicy === undefined || spec.preemptionPolicy === null) && was?.preemptionPolicy !== undefined)
    spec.preemptionPolicy = was.preemptionPolicy;
}
