// What a runtime cannot do, as validation errors at load time, from its capabilities: without images
// there is no entrypoint to fall back on (the command runs on the host), without mounts no volume can
// be put in a container.

import type { Container, Pod } from '../api/types.js';
import { type FieldError, forbidden, newPath, required, sortFieldErrors } from '../api/field-errors.js';
import type { RuntimeCapabilities } from './cri.js';

const commandDetail = "the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or use --runtime=containerd";
const volumeMountsDetail = 'not supported by the process runtime; use --runtime=containerd';

function checkContainers(caps: RuntimeCapabilities, containers: Container[] | undefined, field: 'containers' | 'initContainers'): FieldError[] {
  const errs: FieldError[] = [];
  (containers ?? []).forEach((c, i) => {
    const p = newPath('spec', field).index(i);
    if (!caps.images && !c.command?.length) errs.push(required(p.child('command'), commandDetail));
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
