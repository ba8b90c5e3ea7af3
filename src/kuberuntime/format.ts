// Small formatting helpers shared by the pod worker's modules: the kubelet's `format.Pod`, Go's `%q`
// and Go's time.Duration String(), so messages read exactly as the kubelet writes them.

import type { Container, Pod } from '../api/types.js';
import type { EventObject } from '../events/recorder.js';

/** `<name>_<namespace>(<uid>)`, as the kubelet's format.Pod. */
export function formatPod(pod: Pod): string {
  const m = pod.metadata ?? {};
  return `${m.name ?? ''}_${m.namespace ?? ''}(${m.uid ?? ''})`;
}

/** The event object of a pod, or of one of its containers (`spec.containers{c}`). */
export function podRef(pod: Pod): EventObject {
  const m = pod.metadata ?? {};
  return { namespace: m.namespace ?? 'default', name: m.name ?? '', uid: m.uid ?? '' };
}

export function containerRef(pod: Pod, containerName: string): EventObject {
  const isInit = (pod.spec?.initContainers ?? []).some((c) => c.name === containerName);
  const list = isInit ? 'initContainers' : 'containers';
  return { ...podRef(pod), fieldPath: `spec.${list}{${containerName}}` };
}

/** The spec of a container by name, with whether it is an init container. */
export function findContainer(pod: Pod, name: string): { container: Container; isInit: boolean } | undefined {
  const regular = pod.spec?.containers.find((c) => c.name === name);
  if (regular) return { container: regular, isInit: false };
  const init = pod.spec?.initContainers?.find((c) => c.name === name);
  return init ? { container: init, isInit: true } : undefined;
}

/** A sidecar is an init container with restartPolicy Always (a "restartable init container"). */
export function isSidecar(container: Container): boolean {
  return container.restartPolicy === 'Always';
}

export function hasSidecars(pod: Pod): boolean {
  return (pod.spec?.initContainers ?? []).some(isSidecar);
}
