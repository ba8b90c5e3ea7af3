// What a pod runs without, said on the pod: a Warning event (reason Unsupported) for each field of its
// spec the runtime runs without applying on this host (securityContext capabilities, seccomp,
// read-only root, fsGroup, another user without root, limits without cgroups), once per pod, when
// its status is first reported; for every pod alike, made by a workload's controller or not. The same
// fields are a warning of `podvisor validate` and a Warning header of the API (runtime/pod-rules.ts).

import type { PodKubelet } from '../kubelet/kubelet.js';
import { podRef } from '../kuberuntime/format.js';
import { runtimeObjectWarnings, type PodCapabilities } from '../runtime/pod-rules.js';
import { detectRuntimeHost, type RuntimeHost } from '../runtime/process-runtime.js';

/** How many pod uids are remembered as told (the oldest forgotten first): a bound, not a limit a node reaches. */
const rememberedPods = 10_000;

/** Records the Warning events on the kubelet's pods; nothing for a runtime that applies every field. */
export function recordUnhonouredFields(kubelet: PodKubelet, capabilities: PodCapabilities, host?: RuntimeHost): void {
  if (typeof capabilities !== 'function' && !capabilities.hostProcesses) return;
  const warnings = runtimeObjectWarnings(capabilities, host ?? detectRuntimeHost());
  const told = new Set<string>();
  kubelet.onPodStatus((pod) => {
    const uid = pod.metadata?.uid ?? '';
    if (told.has(uid)) return;
    told.add(uid);
    if (told.size > rememberedPods) told.delete(told.values().next().value as string);
    for (const w of warnings({ ...pod, kind: 'Pod' })) kubelet.events.event(podRef(pod), 'Warning', 'Unsupported', w);
  });
}
