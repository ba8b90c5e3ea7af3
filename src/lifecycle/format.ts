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

/** Go's `%q` for a string (double-quoted, Go escapes). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '"': out += '\\"'; break;
      case '\\': out += '\\\\'; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\t': out += '\\t'; break;
      case '\x07': out += '\\a'; break;
      case '\b': out += '\\b'; break;
      case '\f': out += '\\f'; break;
      case '\v': out += '\\v'; break;
      default:
        if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
        else if (cp === 0xfffd) out += '\\ufffd';
        else out += ch;
    }
  }
  return out + '"';
}

/** Go's `%v` of a []string: `[a b c]`. */
export function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

/** Go's time.Duration.String() for a duration in milliseconds: `10s`, `1m20s`, `5m0s`, `1.5s`, `500ms`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  let out: string;
  if (rest < 1000) {
    out = `${trimFloat(rest)}ms`;
  } else {
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const s = trimFloat(rest / 1000);
    out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}

function trimFloat(n: number): string {
  return String(Number(n.toFixed(9)));
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
