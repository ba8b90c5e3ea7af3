// The RuntimeClass admission plugin, as the API server runs it on a created pod: a runtimeClassName
// must name an existing RuntimeClass (Forbidden otherwise); the class's overhead is set into
// spec.overhead (a pod that sets another is refused) and its scheduling's nodeSelector and
// tolerations are merged into the pod's (a conflicting nodeSelector value is refused).
// Upstream: plugin/pkg/admission/runtimeclass (Admit: setOverhead, setScheduling; Validate:
// validateOverhead), plugin/pkg/scheduler tolerations.MergeTolerations.

import type { Pod, Toleration } from '../api/types.js';
import type { RuntimeClass } from '../api/validation/node.js';
import { canonicalJSON } from '../api/defaults.js';
import { parseQuantity } from '../api/quantity.js';
import { forbiddenObject } from '../http/status.js';

/** The RuntimeClass of a name, undefined when there is none. */
export type RuntimeClassLookup = (name: string) => RuntimeClass | undefined;

const rejected = (pod: Pod, why: string) => forbiddenObject('pods', '', pod.metadata?.name ?? '', why);

/** Two resource lists equal as quantities (apiequality.Semantic.DeepEqual). */
function sameResources(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b ?? {}).sort();
  if (canonicalJSON(ka) !== canonicalJSON(kb)) return false;
  return ka.every((k) => {
    try {
      return parseQuantity(String(a![k])).cmp(parseQuantity(String(b![k]))) === 0;
    } catch {
      return String(a![k]) === String(b![k]);
    }
  });
}

/** MergeTolerations: the pod's, then each of the class's not already tolerated in the same terms. */
function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const out = [...first];
  const key = (t: Toleration) =>
    canonicalJSON({ key: t.key ?? '', operator: t.operator ?? '', value: t.value ?? '', effect: t.effect ?? '', s: t.tolerationSeconds ?? null });
  const seen = new Set(out.map(key));
  for (const t of second) {
    if (seen.has(key(t))) continue;
    seen.add(key(t));
    out.push(t);
  }
  return out;
}

/** Admit then Validate of the plugin for a pod being created; throws the 403 Forbidden ApiError. */
export function admitRuntimeClass(pod: Pod, lookup: RuntimeClassLookup): Pod {
  const spec = pod.spec!;
  const name = spec.runtimeClassName;
  if (!name) {
    if (spec.overhead && Object.keys(spec.overhead).length > 0)
      throw rejected(pod, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    return pod;
  }
  const rc = lookup(name);
  if (!rc) throw rejected(pod, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
  const podFixed = rc.overhead?.podFixed as Record<string, unknown> | undefined;
  if (rc.overhead) {
    if (spec.overhead && Object.keys(spec.overhead).length > 0 && !sameResources(podFixed, spec.overhead as Record<string, unknown>))
      throw rejected(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    if (podFixed) spec.overhead = structuredClone(podFixed) as typeof spec.overhead;
  } else if (spec.overhead && Object.keys(spec.overhead).length > 0) {
    throw rejected(pod, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  }
  const scheduling = rc.scheduling;
  if (scheduling) {
    const selector = spec.nodeSelector;
    if (!selector) {
      if (scheduling.nodeSelector) spec.nodeSelector = { ...scheduling.nodeSelector };
    } else {
      for (const [k, v] of Object.entries(scheduling.nodeSelector ?? {})) {
        const podValue = selector[k];
        if (podValue !== undefined && podValue !== v)
          throw rejected(pod, `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${podValue}`);
        selector[k] = v;
      }
    }
    if (scheduling.tolerations?.length) spec.tolerations = mergeTolerations(spec.tolerations ?? [], scheduling.tolerations as Toleration[]);
  }
  return pod;
}
