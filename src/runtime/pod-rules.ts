// What a runtime cannot do, from its capabilities, judged before anything starts: as validation
// errors (without images there is no entrypoint to fall back on, the command runs on the host;
// without mounts no volume can be put in a container) and as warnings for what it runs but does not
// apply (a host process has no capabilities, seccomp profile or read-only root). Each check is
// written for a pod and applies to a workload's pod template under the template's path, so the
// command line (validate, apply, up, run) and the API (create and update of a Pod or a workload)
// judge a manifest by the same rules.

import type { Container, Pod } from '../api/types.js';
import { type FieldError, forbidden, newPath, required, sortFieldErrors } from '../api/field-errors.js';
import { onPodOrTemplate } from '../api/pod-templates.js';
import { CRI_RUNTIME_CAPABILITIES, type RuntimeCapabilities } from './cri.js';
import { unhonouredFields, type RuntimeHost } from './process/capabilities.js';
import { PROCESS_RUNTIME_CAPABILITIES } from './process/profile.js';

/** The packages that give the containerd runtime on Debian (the fix named with every refusal of an image's entrypoint). */
export const CONTAINERD_PACKAGES = 'containerd runc containernetworking-plugins';

const commandDetail = (name: string | undefined) =>
  `container ${JSON.stringify(name ?? '')} has no command: the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or install ${CONTAINERD_PACKAGES} and use --runtime=containerd`;
const volumeMountsDetail = 'not supported by the process runtime; use --runtime=containerd';

function checkContainers(caps: RuntimeCapabilities, containers: Container[] | undefined, field: 'containers' | 'initContainers'): FieldError[] {
  const errs: FieldError[] = [];
  (containers ?? []).forEach((c, i) => {
    const p = newPath('spec', field).index(i);
    if (!caps.images && !c.command?.length) errs.push(required(p.child('command'), commandDetail(c.name)));
    if (!caps.mounts && c.volumeMounts?.length) errs.push(forbidden(p.child('volumeMounts'), volumeMountsDetail));
  });
  return errs;
}

/** The errors of a pod a runtime of these capabilities cannot run as written (regular and init containers). */
export function runtimePodRules(caps: RuntimeCapabilities): (pod: Pod) => FieldError[] {
  if (caps.images && caps.mounts) return () => [];
  return (pod) =>
    sortFieldErrors([...checkContainers(caps, pod.spec?.containers, 'containers'), ...checkContainers(caps, pod.spec?.initContainers, 'initContainers')]);
}

/** The same rules for any object: a Pod, or a workload's pod template under its path; nothing for other kinds. */
export function runtimeObjectRules(caps: RuntimeCapabilities): (obj: { kind?: string }) => FieldError[] {
  return onPodOrTemplate(runtimePodRules(caps));
}

/**
 * The fields of a Pod or a workload's template that a runtime of these capabilities runs without
 * applying on this host, each as a warning (`<field>: not honoured by the process runtime: <why>`,
 * the text of an API server's Warning header): host processes only (a runtime of containers applies them).
 */
export function runtimeObjectWarnings(caps: RuntimeCapabilities, host: RuntimeHost): (obj: { kind?: string }) => string[] {
  if (!caps.hostProcesses) return () => [];
  const fields = onPodOrTemplate((pod: Pod) => unhonouredFields(pod, host));
  return (obj) => fields(obj).map((u) => `${u.field}: not honoured by the process runtime: ${u.why}`);
}

/** The capabilities a runtime named on the command line (--runtime) has, known before connecting to it. */
export function declaredCapabilities(runtime: string): RuntimeCapabilities {
  return runtime === 'process' ? PROCESS_RUNTIME_CAPABILITIES : CRI_RUNTIME_CAPABILITIES;
}
