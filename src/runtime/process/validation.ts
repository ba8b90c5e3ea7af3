// What the process runtime cannot do, as validation errors at load time: it runs each container's
// command directly on the host, so there is no image entrypoint to fall back on and no mount
// namespace to put volumes in.

import type { Container, Pod } from '../../api/types.js';
import { type FieldError, forbidden, newPath, required, sortFieldErrors } from '../../api/field-errors.js';

const commandDetail =
  "the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or use --runtime=containerd";
const volumeMountsDetail = 'not supported by the process runtime; use --runtime=containerd';

function checkContainers(containers: Container[] | undefined, field: 'containers' | 'initContainers'): FieldError[] {
  const errs: FieldError[] = [];
  (containers ?? []).forEach((c, i) => {
    const p = newPath('spec', field).index(i);
    if (!c.command?.length) errs.push(required(p.child('command'), commandDetail));
    if (c.volumeMounts?.length) errs.push(forbidden(p.child('volumeMounts'), volumeMountsDetail));
  });
  return errs;
}

/** Errors for a pod the process runtime cannot run as written (regular and init containers). */
export function validateForProcessRuntime(pod: Pod): FieldError[] {
  return sortFieldErrors([
    ...checkContainers(pod.spec?.containers, 'containers'),
    ...checkContainers(pod.spec?.initContainers, 'initContainers'),
  ]);
}
