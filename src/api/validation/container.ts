// Container validation (validateContainers, validateInitContainers, validateContainerCommon): names,
// image, ports, env and envFrom, volume mounts, pull policy, resources, and which of probes,
// lifecycle and restartPolicy each kind of container may have.

import type { Container, EnvFromSource, EnvVar } from '../types.js';
import { type FieldError, type FieldPath, duplicate, forbidden, invalid, notFound, notSupported, required } from '../field-errors.js';
import { isConfigMapKey, isDNS1123Label, isDNS1123Subdomain, isEnvVarName, isQualifiedName, isValidPortName, isValidPortNum } from './names.js';
import { validateLifecycle, validateLivenessProbe, validateReadinessProbe, validateStartupProbe } from './probes.js';
import { validateResourceRequirements } from './resources.js';

export function validateDNS1123Label(value: string, path: FieldPath): FieldError[] {
  return isDNS1123Label(value).map((m) => invalid(path, value, m));
}

function validateContainerPorts(ports: Container['ports'], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (ports ?? []).forEach((port, i) => {
    const p = path.index(i);
    if (port.name) {
      const msgs = isValidPortName(port.name);
      if (msgs.length) errs.push(...msgs.map((m) => invalid(p.child('name'), port.name, m)));
      else if (names.has(port.name)) errs.push(duplicate(p.child('name'), port.name));
      else names.add(port.name);
    }
    if (!port.containerPort) errs.push(required(p.child('containerPort'), ''));
    else errs.push(...isValidPortNum(port.containerPort).map((m) => invalid(p.child('containerPort'), port.containerPort, m)));
    if (port.hostPort) errs.push(...isValidPortNum(port.hostPort).map((m) => invalid(p.child('hostPort'), port.hostPort, m)));
    if (!port.protocol) errs.push(required(p.child('protocol'), ''));
    else if (!['SCTP', 'TCP', 'UDP'].includes(port.protocol)) errs.push(notSupported(p.child('protocol'), port.protocol, ['SCTP', 'TCP', 'UDP']));
  });
  return errs;
}

const envFieldPaths = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
const resourceFieldPaths = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'];

function validateObjectNameRef(name: string | undefined, path: FieldPath): FieldError[] {
  return isDNS1123Subdomain(name ?? '').map((m) => invalid(path, name ?? '', m));
}

function validateKeySelector(sel: { name?: string; key?: string }, path: FieldPath): FieldError[] {
  const errs = validateObjectNameRef(sel.name, path.child('name'));
  if (!sel.key) errs.push(required(path.child('key'), ''));
  else errs.push(...isConfigMapKey(sel.key).map((m) => invalid(path.child('key'), sel.key, m)));
  return errs;
}

function validateEnvValueFrom(ev: EnvVar, path: FieldPath): FieldError[] {
  const from = ev.valueFrom;
  if (!from) return [];
  const errs: FieldError[] = [];
  let sources = 0;
  if (from.fieldRef) {
    sources++;
    const p = path.child('fieldRef');
    const fs = from.fieldRef;
    if (!fs.apiVersion) errs.push(required(p.child('apiVersion'), ''));
    else if (!fs.fieldPath) errs.push(required(p.child('fieldPath'), ''));
    else if (fs.apiVersion !== 'v1') {
      errs.push(invalid(p.child('fieldPath'), fs.fieldPath, `error converting fieldPath: unsupported pod version: ${fs.apiVersion}`));
    } else {
      const m = /^(metadata\.labels|metadata\.annotations)\['(.*)'\]$/.exec(fs.fieldPath);
      if (m) {
        const key = m[1] === 'metadata.annotations' ? m[2]!.toLowerCase() : m[2]!;
        errs.push(...isQualifiedName(key).map((msg) => invalid(p, key, msg)));
      } else if (!envFieldPaths.includes(fs.fieldPath)) {
        errs.push(notSupported(p.child('fieldPath'), fs.fieldPath, envFieldPaths));
      }
    }
  }
  if (from.resourceFieldRef) {
    sources++;
    const p = path.child('resourceFieldRef');
    const r = from.resourceFieldRef.resource;
    if (!r) errs.push(required(p.child('resource'), ''));
    else if (!resourceFieldPaths.includes(r) && !r.startsWith('requests.hugepages-') && !r.startsWith('limits.hugepages-')) {
      errs.push(notSupported(p.child('resource'), r, resourceFieldPaths));
    }
  }
  if (from.configMapKeyRef) {
    sources++;
    errs.push(...validateKeySelector(from.configMapKeyRef, path.child('configMapKeyRef')));
  }
  if (from.secretKeyRef) {
    sources++;
    errs.push(...validateKeySelector(from.secretKeyRef, path.child('secretKeyRef')));
  }
  if (sources === 0) errs.push(invalid(path, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  else if (ev.value) errs.push(invalid(path, '', 'may not be specified when `value` is not empty'));
  else if (sources > 1) errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  return errs;
}

export function validateEnv(vars: EnvVar[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (vars ?? []).forEach((ev, i) => {
    const p = path.index(i);
    if (!ev.name) errs.push(required(p.child('name'), ''));
    else errs.push(...isEnvVarName(ev.name).map((m) => invalid(p.child('name'), ev.name, m)));
    errs.push(...validateEnvValueFrom(ev, p.child('valueFrom')));
  });
  return errs;
}

export function validateEnvFrom(vars: EnvFromSource[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (vars ?? []).forEach((ev, i) => {
    const p = path.index(i);
    if (ev.prefix) errs.push(...isEnvVarName(ev.prefix).map((m) => invalid(p.child('prefix'), ev.prefix, m)));
    let sources = 0;
    for (const kind of ['configMapRef', 'secretRef'] as const) {
      const ref = ev[kind];
      if (!ref) continue;
      sources++;
      if (!ref.name) errs.push(required(p.child(kind, 'name'), ''));
      // Referenced names are checked as name prefixes (a trailing '-' is allowed).
      else errs.push(...isDNS1123Subdomain(ref.name.endsWith('-') ? `${ref.name}a` : ref.name).map((m) => invalid(p.child(kind, 'name'), ref.name, m)));
    }
    if (sources === 0) errs.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1) errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

function validateVolumeMounts(c: Container, volumes: ReadonlySet<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const mountPaths = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, i) => {
    const p = path.index(i);
    if (!m.name) errs.push(required(p.child('name'), ''));
    if (!volumes.has(m.name)) errs.push(notFound(p.child('name'), m.name ?? ''));
    if (!m.mountPath) errs.push(required(p.child('mountPath'), ''));
    if (mountPaths.has(m.mountPath)) errs.push(invalid(p.child('mountPath'), m.mountPath, 'must be unique'));
    mountPaths.add(m.mountPath);
  });
  return errs;
}

export interface ContainerContext {
  /** Names of the pod's volumes, for volumeMounts. */
  volumes: ReadonlySet<string>;
  /** The pod's terminationGracePeriodSeconds, for lifecycle sleep. */
  gracePeriod: number | undefined;
}

/** validateContainerCommon: what every kind of container must satisfy. */
export function validateContainerCommon(c: Container, ctx: ContainerContext, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(required(path.child('name'), ''));
  else errs.push(...validateDNS1123Label(c.name, path.child('name')));
  if (!c.image) errs.push(required(path.child('image'), ''));
  else if (c.image !== c.image.trim()) errs.push(invalid(path.child('image'), c.image, 'must not have leading or trailing whitespace'));
  const tmp = c.terminationMessagePolicy ?? '';
  if (tmp === '') errs.push(required(path.child('terminationMessagePolicy'), ''));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    errs.push(notSupported(path.child('terminationMessagePolicy'), tmp, ['File', 'FallbackToLogsOnError']));
  }
  errs.push(...validateContainerPorts(c.ports, path.child('ports')));
  errs.push(...validateEnv(c.env, path.child('env')));
  errs.push(...validateEnvFrom(c.envFrom, path.child('envFrom')));
  errs.push(...validateVolumeMounts(c, ctx.volumes, path.child('volumeMounts')));
  const pull = c.imagePullPolicy ?? '';
  if (pull === '') errs.push(required(path.child('imagePullPolicy'), ''));
  else if (!['Always', 'IfNotPresent', 'Never'].includes(pull))
    errs.push(notSupported(path.child('imagePullPolicy'), pull, ['Always', 'IfNotPresent', 'Never']));
  errs.push(...validateResourceRequirements(c.resources as never, path.child('resources')));
  return errs;
}

/** Host ports must not collide (protocol/hostIP/port) within the containers given. */
function checkHostPortConflicts(containers: readonly Container[], path: FieldPath, indexOffset = 0): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((c, ci) => {
    (c.ports ?? []).forEach((port, pi) => {
      if (!port.hostPort) return;
      const key = `${port.protocol ?? ''}/${port.hostIP ?? ''}/${port.hostPort}`;
      if (seen.has(key))
        errs.push(
          duplicate(
            path
              .index(ci + indexOffset)
              .child('ports')
              .index(pi)
              .child('hostPort'),
            key,
          ),
        );
      else seen.add(key);
    });
  });
  return errs;
}

export function validateContainers(containers: Container[] | undefined, ctx: ContainerContext, path: FieldPath): FieldError[] {
  if (!containers?.length) return [required(path, '')];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const p = path.index(i);
    errs.push(...validateContainerCommon(c, ctx, p));
    if (names.has(c.name)) errs.push(duplicate(p.child('name'), c.name));
    else names.add(c.name);
    if (c.lifecycle) errs.push(...validateLifecycle(c.lifecycle, ctx.gracePeriod, p.child('lifecycle')));
    errs.push(...validateLivenessProbe(c.livenessProbe, ctx.gracePeriod, p.child('livenessProbe')));
    errs.push(...validateReadinessProbe(c.readinessProbe, ctx.gracePeriod, p.child('readinessProbe')));
    errs.push(...validateStartupProbe(c.startupProbe, ctx.gracePeriod, p.child('startupProbe')));
    if (c.restartPolicy !== undefined) errs.push(forbidden(p.child('restartPolicy'), 'may not be set for non-init containers'));
  });
  errs.push(...checkHostPortConflicts(containers, path));
  return errs;
}

export function validateInitContainers(
  initContainers: Container[] | undefined,
  regular: Container[] | undefined,
  ctx: ContainerContext,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set((regular ?? []).map((c) => c.name));
  (initContainers ?? []).forEach((c, i) => {
    const p = path.index(i);
    errs.push(...validateContainerCommon(c, ctx, p));
    let restartAlways = false;
    if (c.restartPolicy !== undefined) {
      if (c.restartPolicy !== 'Always') errs.push(notSupported(p.child('restartPolicy'), c.restartPolicy, ['Always']));
      restartAlways = c.restartPolicy === 'Always';
    }
    if (names.has(c.name)) errs.push(duplicate(p.child('name'), c.name));
    else if (c.name) names.add(c.name);
    // Init containers run one at a time, so only ports within one of them can collide.
    errs.push(...checkHostPortConflicts([c], path, i));
    if (restartAlways) {
      if (c.lifecycle) errs.push(...validateLifecycle(c.lifecycle, ctx.gracePeriod, p.child('lifecycle')));
      errs.push(...validateLivenessProbe(c.livenessProbe, ctx.gracePeriod, p.child('livenessProbe')));
      errs.push(...validateReadinessProbe(c.readinessProbe, ctx.gracePeriod, p.child('readinessProbe')));
      errs.push(...validateStartupProbe(c.startupProbe, ctx.gracePeriod, p.child('startupProbe')));
    } else {
      const detail = 'may not be set for init containers without restartPolicy=Always';
      if (c.lifecycle) errs.push(forbidden(p.child('lifecycle'), detail));
      if (c.livenessProbe) errs.push(forbidden(p.child('livenessProbe'), detail));
      if (c.readinessProbe) errs.push(forbidden(p.child('readinessProbe'), detail));
      if (c.startupProbe) errs.push(forbidden(p.child('startupProbe'), detail));
    }
  });
  return errs;
}
