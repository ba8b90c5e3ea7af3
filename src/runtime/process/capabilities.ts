// Which pod fields the process runtime cannot honour on this host, so they are never silently ignored:
// limits need a writable cgroup hierarchy, another user or group needs root, and some security
// settings (capabilities, seccomp, SELinux, …) need a container runtime.

import { accessSync, constants } from 'node:fs';
import type { Container, Pod } from '../../api/types.js';
import { detectCgroupLayout, type CgroupLayout } from './cgroup.js';
import { findSetpriv } from './identity.js';

/** What this host lets the process runtime do (injected in tests). */
export interface RuntimeHost {
  uid: number;
  gid: number;
  /** A writable cgroup hierarchy with memory, cpu and pids. */
  cgroups: boolean;
  /** setpriv(1) is installed (supplementary groups). */
  setpriv: boolean;
}

export function detectRuntimeHost(layout: CgroupLayout | undefined = detectCgroupLayout()): RuntimeHost {
  const dirs = !layout ? [] : layout.version === 2 ? [layout.root] : [layout.memory, layout.cpu, layout.pids];
  return {
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    cgroups: dirs.length > 0 && dirs.every(writable),
    setpriv: findSetpriv() !== undefined,
  };
}

export interface Unhonoured {
  /** Field path, e.g. `spec.containers[0].resources.limits.memory`. */
  field: string;
  why: string;
}

const NO_CGROUPS = 'no writable cgroup hierarchy (podvisor is not root, or cgroups are read-only)';
const NOT_ROOT = 'podvisor is not running as root';
const PRIVATE_MOUNTS = "the container's mount namespace is private: no mount propagates into or out of it";
const NEEDS_RUNTIME = 'the process runtime runs host processes without namespaces or security profiles; use --runtime=containerd';

/** Container security settings a host process cannot have, unless set to the value that asks for nothing. */
const containerOnlyRuntimeFields: Array<[string, unknown]> = [
  ['capabilities', undefined],
  ['privileged', false],
  ['readOnlyRootFilesystem', false],
  ['allowPrivilegeEscalation', true],
  ['seccompProfile', undefined],
  ['seLinuxOptions', undefined],
  ['appArmorProfile', undefined],
  ['procMount', 'Default'],
];
const podOnlyRuntimeFields: Array<[string, unknown]> = [
  ['fsGroup', undefined],
  ['sysctls', undefined],
  ['seccompProfile', undefined],
  ['seLinuxOptions', undefined],
  ['appArmorProfile', undefined],
];

/** Every field of pod this host's process runtime cannot honour, with why. */
export function unhonouredFields(pod: Pod, host: RuntimeHost): Unhonoured[] {
  const out: Unhonoured[] = [];
  const psc = (pod.spec?.securityContext ?? {}) as Record<string, unknown>;
  const root = host.uid === 0;
  const identity = (path: string, sc: Record<string, unknown>) => {
    if (typeof sc.runAsUser === 'number' && sc.runAsUser !== host.uid && !root) out.push({ field: `${path}.runAsUser`, why: NOT_ROOT });
    if (typeof sc.runAsGroup === 'number' && sc.runAsGroup !== host.gid && !root) out.push({ field: `${path}.runAsGroup`, why: NOT_ROOT });
  };
  identity('spec.securityContext', psc);
  if (Array.isArray(psc.supplementalGroups) && psc.supplementalGroups.length > 0) {
    if (!root) out.push({ field: 'spec.securityContext.supplementalGroups', why: NOT_ROOT });
    else if (!host.setpriv) out.push({ field: 'spec.securityContext.supplementalGroups', why: 'setpriv(1) is not installed' });
  }
  for (const [key, harmless] of podOnlyRuntimeFields) {
    if (isSet(psc[key], harmless)) out.push({ field: `spec.securityContext.${key}`, why: NEEDS_RUNTIME });
  }
  const each = (list: Container[] | undefined, kind: string) =>
    (list ?? []).forEach((c, i) => {
      const path = `spec.${kind}[${i}]`;
      for (const r of ['memory', 'cpu']) {
        if (c.resources?.limits?.[r] !== undefined && !host.cgroups) out.push({ field: `${path}.resources.limits.${r}`, why: NO_CGROUPS });
      }
      (c.volumeMounts ?? []).forEach((m, j) => {
        if (m.mountPropagation && m.mountPropagation !== 'None') out.push({ field: `${path}.volumeMounts[${j}].mountPropagation`, why: PRIVATE_MOUNTS });
      });
      const sc = (c.securityContext ?? {}) as Record<string, unknown>;
      identity(`${path}.securityContext`, sc);
      for (const [key, harmless] of containerOnlyRuntimeFields) {
        if (isSet(sc[key], harmless)) out.push({ field: `${path}.securityContext.${key}`, why: NEEDS_RUNTIME });
      }
    });
  each(pod.spec?.initContainers, 'initContainers');
  each(pod.spec?.containers, 'containers');
  return out;
}

/** The validation warnings (`<field>: not honoured by the process runtime: <why>`) for pod. */
export function unhonouredWarnings(pod: Pod, host: RuntimeHost): string[] {
  const name = pod.metadata?.name ?? '';
  return unhonouredFields(pod, host).map((u) => `pod/${name}: ${u.field}: not honoured by the process runtime: ${u.why}`);
}

function isSet(v: unknown, harmless: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (harmless !== undefined && v === harmless) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
