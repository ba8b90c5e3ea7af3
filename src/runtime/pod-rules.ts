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
import { CRI_RUNTIME_CAPABILITIES, type RuntimeCapabilities, type RuntimeService } from './cri.js';
import { unhonouredFields, type RuntimeHost } from './process/capabilities.js';
import { mountNamespaceProblem } from './process/mount-namespace.js';
import { PROCESS_RUNTIME_CAPABILITIES } from './process/profile.js';

/** --runtime naming both runtimes: pods run on containerd, or as host processes when their RuntimeClass handler is `process`. */
export const MIXED_RUNTIME = 'process,containerd';

/** The handler of the process runtime beside containerd (RuntimeClass `process`). */
export const PROCESS_HANDLER = 'process';

/** The RuntimeClasses every agent has, by name: their handlers. */
export const BUILTIN_RUNTIME_CLASSES: Readonly<Record<string, string>> = Object.freeze({ process: PROCESS_HANDLER });

/**
 * What a pod's runtime can do: one runtime's capabilities for every pod, or, for an agent of several
 * runtimes, chosen per pod by its RuntimeClass handler.
 */
export type PodCapabilities = RuntimeCapabilities | ((pod: Pod) => RuntimeCapabilities);

/** The capabilities of the runtime that runs this pod. */
export const capabilitiesFor = (c: PodCapabilities, pod: Pod): RuntimeCapabilities => (typeof c === 'function' ? c(pod) : c);

/**
 * The capabilities of each pod's runtime on an agent of several runtimes (a runtime with
 * handlerRuntime): by its runtimeClassName's handler (handlerOfClass, then the built-in classes); the
 * default runtime's for a pod without one or of a class not known.
 */
export function capabilitiesByRuntimeClass(
  runtime: Pick<RuntimeService, 'capabilities' | 'handlerRuntime'>,
  handlerOfClass: (name: string) => string | undefined = () => undefined,
): PodCapabilities {
  const byHandler = runtime.handlerRuntime?.bind(runtime);
  if (!byHandler) return runtime.capabilities;
  return (pod) => {
    const name = pod.spec?.runtimeClassName;
    const handler = name ? (handlerOfClass(name) ?? BUILTIN_RUNTIME_CLASSES[name]) : '';
    return (handler !== undefined ? byHandler(handler)?.capabilities : undefined) ?? runtime.capabilities;
  };
}

/** The packages that give the containerd runtime on Debian (the fix named with every refusal of an image's entrypoint). */
export const CONTAINERD_PACKAGES = 'containerd runc containernetworking-plugins';

const commandDetail = (name: string | undefined) =>
  `container ${JSON.stringify(name ?? '')} has no command: the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or install ${CONTAINERD_PACKAGES} and use --runtime=containerd`;
const volumeMountsDetail = () =>
  `not supported by the process runtime on this host: ${mountNamespaceProblem() ?? 'no mount namespace can be made'}; use --runtime=containerd`;

const volumeDevicesDetail = 'block devices are not supported by the process runtime; use --runtime=containerd';

function checkContainers(caps: RuntimeCapabilities, containers: Container[] | undefined, field: 'containers' | 'initContainers'): FieldError[] {
  const errs: FieldError[] = [];
  (containers ?? []).forEach((c, i) => {
    const p = newPath('spec', field).index(i);
    if (!caps.images && !c.command?.length) errs.push(required(p.child('command'), commandDetail(c.name)));
    if (!caps.mounts && c.volumeMounts?.length) errs.push(forbidden(p.child('volumeMounts'), volumeMountsDetail()));
    if (caps.hostProcesses && c.volumeDevices?.length) errs.push(forbidden(p.child('volumeDevices'), volumeDevicesDetail));
  });
  return errs;
}

/** The errors of a pod a runtime of these capabilities cannot run as written (regular and init containers). */
export function runtimePodRules(podCaps: PodCapabilities): (pod: Pod) => FieldError[] {
  if (typeof podCaps !== 'function' && podCaps.images && podCaps.mounts) return () => [];
  return (pod) => {
    const caps = capabilitiesFor(podCaps, pod);
    return sortFieldErrors([
      ...checkContainers(caps, pod.spec?.containers, 'containers'),
      ...checkContainers(caps, pod.spec?.initContainers, 'initContainers'),
    ]);
  };
}

/** The same rules for any object: a Pod, or a workload's pod template under its path; nothing for other kinds. */
export function runtimeObjectRules(caps: PodCapabilities): (obj: { kind?: string }) => FieldError[] {
  return onPodOrTemplate(runtimePodRules(caps));
}

/**
 * The fields of a Pod or a workload's template that a runtime of these capabilities runs without
 * applying on this host, each as a warning (`<field>: not honoured by the process runtime: <why>`,
 * the text of an API server's Warning header): host processes only (a runtime of containers applies them).
 */
export function runtimeObjectWarnings(caps: PodCapabilities, host: RuntimeHost): (obj: { kind?: string }) => string[] {
  if (typeof caps !== 'function' && !caps.hostProcesses) return () => [];
  const fields = onPodOrTemplate((pod: Pod) => (capabilitiesFor(caps, pod).hostProcesses ? unhonouredFields(pod, host) : []));
  return (obj) => fields(obj).map((u) => `${u.field}: not honoured by the process runtime: ${u.why}`);
}

/**
 * The capabilities a runtime named on the command line (--runtime) has, known before connecting to
 * it; with both runtimes, per pod by its RuntimeClass (handlerOfClass: the classes of the manifests).
 */
export function declaredCapabilities(runtime: string, handlerOfClass?: (name: string) => string | undefined): PodCapabilities {
  if (runtime !== MIXED_RUNTIME) return runtime === 'process' ? PROCESS_RUNTIME_CAPABILITIES : CRI_RUNTIME_CAPABILITIES;
  const declared = {
    capabilities: CRI_RUNTIME_CAPABILITIES,
    handlerRuntime: (h: string) =>
      h === PROCESS_HANDLER ? { name: 'process', capabilities: PROCESS_RUNTIME_CAPABILITIES } : { name: 'containerd', capabilities: CRI_RUNTIME_CAPABILITIES },
  };
  return capabilitiesByRuntimeClass(declared, handlerOfClass);
}
