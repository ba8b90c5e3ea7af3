// A container's environment as the kubelet computes it (makeEnvironmentVariables): envFrom, then env
// with `$(VAR)` expansion, the downward API (fieldRef, resourceFieldRef) and ConfigMap/Secret keys.

import { cpus, totalmem } from 'node:os';
import { statfsSync } from 'node:fs';
import type { ConfigMap, Container, EnvVar, PersistentVolume, PersistentVolumeClaim, Pod, Secret } from '../api/types.js';
import { parseQuantity, type Quantity } from '../api/quantity.js';

/** A failure to build a container's config; the pod worker reports it as `CreateContainerConfigError`. */
export class ContainerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContainerConfigError';
  }
}

export interface ObjectLookup {
  configMap(namespace: string, name: string): ConfigMap | undefined;
  secret(namespace: string, name: string): Secret | undefined;
  /** The Services of a namespace, for the service-link variables (none when the node keeps none). */
  services?(namespace: string): readonly ServiceForEnv[];
  /** A token of the pod's service account bound to the pod (a projected serviceAccountToken source), where the node can have one issued. */
  serviceAccountToken?(pod: Pod, source: { audience?: string; expirationSeconds?: number }): string;
  /** A claim and a volume, for persistentVolumeClaim volumes (where the node keeps them). */
  persistentVolumeClaim?(namespace: string, name: string): PersistentVolumeClaim | undefined;
  persistentVolume?(name: string): PersistentVolume | undefined;
  /** A node.k8s.io/v1 RuntimeClass by name (none when the node keeps none: the built-in classes only). */
  runtimeClass?(name: string): { handler: string } | undefined;
}

/** What the service-link variables read of a Service. */
export interface ServiceForEnv {
  metadata?: { name?: string; namespace?: string };
  spec?: { clusterIP?: string; ports?: ReadonlyArray<{ name?: string; port: number; protocol?: string }> };
}

/** What the kubelet substitutes for unset limits in resourceFieldRef (its node allocatable). */
export interface NodeAllocatable {
  cpuMilli: number;
  memoryBytes: number;
  /** Defaults to the size of the filesystem holding the sandbox directory. */
  ephemeralStorageBytes?: number;
}

export interface EnvironmentInput {
  pod: Pod;
  container: Container;
  podIP: string;
  podIPs?: string[];
  hostIP: string;
  hostIPs?: string[];
  lookup: ObjectLookup;
  nodeAllocatable?: NodeAllocatable;
  /** Used only to size ephemeral storage when nodeAllocatable does not say. */
  sandboxDir?: string;
}

// --- size bounds ---

/**
 * What execve accepts, so a container the kernel would refuse (E2BIG, "argument list too long") fails
 * at config time with a message naming the variable, and an expansion bomb never gets built: one
 * `NAME=value` string at most MAX_ARG_STRLEN (32 pages, NUL included), and the whole environment plus
 * command and arguments at most 2 MiB (ARG_MAX under the default 8 MiB stack).
 */
export const MAX_ENV_STRING_BYTES = 131072 - 1;
export const MAX_ENV_TOTAL_BYTES = 2 * 1024 * 1024;

/** Thrown by expand when its output would pass the bound. */
class ExpansionTooLong extends Error {}

function tooLong(what: string): ContainerConfigError {
  return new ContainerConfigError(
    `${what} expands to more than ${MAX_ENV_STRING_BYTES + 1} bytes, the most one variable or argument can hold (the kernel's MAX_ARG_STRLEN)`,
  );
}

// --- $(VAR) expansion: third_party/forked/golang/expansion ---

/** Looks a name up in each context in turn; unresolved references stay literal (`$(NAME)`). */
export function mappingFuncFor(...contexts: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const ctx of contexts) {
      const v = ctx.get(name);
      if (v !== undefined) return v;
    }
    return `$(${name})`;
  };
}

/**
 * Expands `$(VAR)` references in input. `$$` is an escaped `$`; `$` before anything but `(` or `$`
 * stays as it is; an unclosed `$(` stays literal.
 */
export function expand(input: string, mapping: (name: string) => string, maxLength = Infinity): string {
  if (!input.includes('$')) return input;
  let out = '';
  const append = (piece: string) => {
    if (out.length + piece.length > maxLength) throw new ExpansionTooLong();
    out += piece;
  };
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    append(input.slice(checkpoint, cursor));
    const next = input[cursor + 1];
    let advance = 1;
    if (next === '$') {
      append('$');
    } else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close === -1) {
        append('$(');
      } else {
        append(mapping(input.slice(cursor + 2, close)));
        advance = close - cursor;
      }
    } else {
      append(`$${next}`);
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  append(input.slice(checkpoint));
  return out;
}

/** expand, bounded: throws ContainerConfigError naming what when the result would be too long for execve. */
export function expandBounded(input: string, mapping: (name: string) => string, what: string): string {
  try {
    return expand(input, mapping, MAX_ENV_STRING_BYTES);
  } catch (err) {
    if (err instanceof ExpansionTooLong) throw tooLong(what);
    throw err;
  }
}

/**
 * Checks the finished environment and command line against execve's limits (each variable, then
 * the total), in the order the variables are defined.
 */
export function checkExecSize(env: ReadonlyMap<string, string>, argv: readonly string[]): void {
  let total = 0;
  for (const [k, v] of env) {
    const size = Buffer.byteLength(k) + 1 + Buffer.byteLength(v);
    if (size > MAX_ENV_STRING_BYTES) {
      throw new ContainerConfigError(
        `environment variable ${JSON.stringify(k)} is ${size} bytes, more than the ${MAX_ENV_STRING_BYTES + 1} one variable can hold (the kernel's MAX_ARG_STRLEN)`,
      );
    }
    total += size + 1;
  }
  for (const a of argv) total += Buffer.byteLength(a) + 1;
  if (total > MAX_ENV_TOTAL_BYTES) {
    throw new ContainerConfigError(
      `the environment and command line take ${total} bytes, more than the ${MAX_ENV_TOTAL_BYTES} a process can be started with (argument list too long)`,
    );
  }
}

// --- makeEnvironmentVariables ---

/** The namespace and names of the Services whose variables every pod gets (the kubelet's masterServices). */
const MASTER_SERVICE_NAMESPACE = 'default';
const MASTER_SERVICES = new Set(['kubernetes']);

/** makeEnvVariableName: upper case, `-` as `_`. */
const envName = (s: string) => s.replace(/-/g, '_').toUpperCase();

/**
 * The service-link variables of a pod (the kubelet's getServiceEnvVarMap and envvars.FromServices):
 * for each Service of the pod's namespace with a ClusterIP, {SVC}_SERVICE_HOST, {SVC}_SERVICE_PORT,
 * {SVC}_SERVICE_PORT_{NAME} per named port and the Docker-link variables ({SVC}_PORT,
 * {SVC}_PORT_{port}_{PROTO}[_PROTO|_PORT|_ADDR]); with enableServiceLinks false, only those of
 * the `kubernetes` Service of `default`.
 */
export function serviceEnvVars(pod: Pod, lookup: ObjectLookup): Map<string, string> {
  const env = new Map<string, string>();
  if (!lookup.services) return env;
  // The API server's own Service is always there (getServiceEnvVarMap's master services); the
  // others of the pod's namespace with enableServiceLinks.
  const byName = new Map<string, ServiceForEnv>();
  for (const svc of lookup.services(MASTER_SERVICE_NAMESPACE)) {
    if (MASTER_SERVICES.has(svc.metadata?.name ?? '')) byName.set(svc.metadata!.name!, svc);
  }
  if (pod.spec?.enableServiceLinks !== false) {
    for (const svc of lookup.services(pod.metadata?.namespace || 'default')) byName.set(svc.metadata?.name ?? '', svc);
  }
  for (const svc of byName.values()) {
    const ip = svc.spec?.clusterIP;
    const ports = svc.spec?.ports ?? [];
    if (!ip || ip === 'None' || ports.length === 0) continue;
    const prefix = envName(svc.metadata?.name ?? '');
    env.set(`${prefix}_SERVICE_HOST`, ip);
    env.set(`${prefix}_SERVICE_PORT`, String(ports[0]!.port));
    for (const p of ports) if (p.name) env.set(`${prefix}_SERVICE_PORT_${envName(p.name)}`, String(p.port));
    ports.forEach((p, i) => {
      const proto = (p.protocol || 'TCP').toLowerCase();
      const url = `${proto}://${ip}:${p.port}`;
      if (i === 0) env.set(`${prefix}_PORT`, url);
      const portPrefix = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      env.set(portPrefix, url);
      env.set(`${portPrefix}_PROTO`, proto);
      env.set(`${portPrefix}_PORT`, String(p.port));
      env.set(`${portPrefix}_ADDR`, ip);
    });
  }
  return env;
}

/**
 * The container's variables in order: envFrom sources (in order, later ones overriding, prefixed),
 * then env entries (overriding; values expanded against everything defined before them). A name
 * defined twice keeps its first position. Then the service-link variables of the Services that
 * exist when the container starts (serviceEnvVars), which `$(VAR)` references may also name.
 */
export function makeEnvironmentVariables(input: EnvironmentInput): Map<string, string> {
  const { pod, container, lookup } = input;
  const ns = pod.metadata?.namespace || 'default';
  const configMaps = new Map<string, ConfigMap>();
  const secrets = new Map<string, Secret>();
  const env = new Map<string, string>();

  const getConfigMap = (name: string, optional: boolean): ConfigMap | undefined => {
    let cm = configMaps.get(name);
    if (!cm) {
      cm = lookup.configMap(ns, name);
      if (!cm) {
        if (optional) return undefined;
        throw new ContainerConfigError(`configmap ${JSON.stringify(name)} not found`);
      }
      configMaps.set(name, cm);
    }
    return cm;
  };
  const getSecret = (name: string, optional: boolean): Secret | undefined => {
    let s = secrets.get(name);
    if (!s) {
      s = lookup.secret(ns, name);
      if (!s) {
        if (optional) return undefined;
        throw new ContainerConfigError(`secret ${JSON.stringify(name)} not found`);
      }
      secrets.set(name, s);
    }
    return s;
  };

  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const cm = getConfigMap(from.configMapRef.name ?? '', from.configMapRef.optional === true);
      if (!cm) continue;
      for (const [k, v] of Object.entries(cm.data ?? {})) env.set(prefix + k, v);
    } else if (from.secretRef) {
      const s = getSecret(from.secretRef.name ?? '', from.secretRef.optional === true);
      if (!s) continue;
      for (const [k, v] of Object.entries(secretData(s))) env.set(prefix + k, v);
    }
  }

  const services = serviceEnvVars(pod, lookup);
  const mapping = mappingFuncFor(env, services);
  for (const ev of container.env ?? []) {
    const value = resolveEnvVar(ev, input, mapping, getConfigMap, getSecret);
    if (value === undefined) continue;
    env.set(ev.name, value);
  }
  // The service variables come last, where the container defines none of the same name.
  for (const [k, v] of services) if (!env.has(k)) env.set(k, v);
  return env;
}

/** The value of one env entry; undefined when an optional reference is missing (entry skipped). */
function resolveEnvVar(
  ev: EnvVar,
  input: EnvironmentInput,
  mapping: (name: string) => string,
  getConfigMap: (name: string, optional: boolean) => ConfigMap | undefined,
  getSecret: (name: string, optional: boolean) => Secret | undefined,
): string | undefined {
  const ns = input.pod.metadata?.namespace || 'default';
  if (ev.value) return expandBounded(ev.value, mapping, `environment variable ${JSON.stringify(ev.name)}`);
  const from = ev.valueFrom;
  if (!from) return ev.value ?? '';
  if (from.fieldRef) {
    return podFieldSelectorRuntimeValue(from.fieldRef.apiVersion, from.fieldRef.fieldPath, input);
  }
  if (from.resourceFieldRef) {
    return containerResourceRuntimeValue(from.resourceFieldRef, input);
  }
  if (from.configMapKeyRef) {
    const { name = '', key, optional } = from.configMapKeyRef;
    const cm = getConfigMap(name, optional === true);
    if (!cm) return undefined;
    const v = cm.data?.[key];
    if (v === undefined) {
      if (optional) return undefined;
      throw new ContainerConfigError(`couldn't find key ${key} in ConfigMap ${ns}/${name}`);
    }
    return v;
  }
  if (from.secretKeyRef) {
    const { name = '', key, optional } = from.secretKeyRef;
    const s = getSecret(name, optional === true);
    if (!s) return undefined;
    const v = secretData(s)[key];
    if (v === undefined) {
      if (optional) return undefined;
      throw new ContainerConfigError(`couldn't find key ${key} in Secret ${ns}/${name}`);
    }
    return v;
  }
  return '';
}

/** A Secret's values: `data` is base64 as in the API; `stringData` (write-only there) is honoured too. */
function secretData(s: Secret): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  for (const [k, v] of Object.entries(s.stringData ?? {})) out[k] = v;
  return out;
}

// --- downward API: fieldRef ---

const supportedFieldLabels = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'spec.terminationGracePeriodSeconds',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);

/** `metadata.labels['app']` → ['metadata.labels', 'app']; undefined when not subscripted. */
function splitSubscriptedPath(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const s = fieldPath.slice(0, -2);
  const i = s.indexOf("['");
  if (i <= 0) return undefined;
  return [s.slice(0, i), s.slice(i + 2)];
}

/** Labels and annotations as the downward API prints a whole map: sorted `k="v"` lines. */
function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1]!;
  if (name.length === 0 || name.length > 63 || !qualifiedNamePart.test(name)) return false;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > 253 || !dns1123Subdomain.test(prefix)) return false;
  }
  return true;
}

/** podFieldSelectorRuntimeValue + ConvertDownwardAPIFieldLabel + ExtractFieldPathAsString. */
export function podFieldSelectorRuntimeValue(
  apiVersion: string | undefined,
  fieldPath: string,
  input: Pick<EnvironmentInput, 'pod' | 'podIP' | 'podIPs' | 'hostIP' | 'hostIPs'>,
): string {
  const version = apiVersion || 'v1';
  if (version !== 'v1') throw new ContainerConfigError(`unsupported pod version: ${version}`);
  const { pod } = input;
  const meta = pod.metadata ?? {};
  const sub = splitSubscriptedPath(fieldPath);
  if (sub) {
    const [path, key] = sub;
    if (path === 'metadata.annotations') {
      if (!isQualifiedName(key.toLowerCase())) throw new ContainerConfigError(`invalid key subscript in ${fieldPath}`);
      return meta.annotations?.[key] ?? '';
    }
    if (path === 'metadata.labels') {
      if (!isQualifiedName(key)) throw new ContainerConfigError(`invalid key subscript in ${fieldPath}`);
      return meta.labels?.[key] ?? '';
    }
    throw new ContainerConfigError(`field label does not support subscript: ${fieldPath}`);
  }
  const label = fieldPath === 'spec.host' ? 'spec.nodeName' : fieldPath;
  if (!supportedFieldLabels.has(label)) throw new ContainerConfigError(`field label not supported: ${fieldPath}`);
  const podIPs = input.podIPs?.length ? input.podIPs : [input.podIP];
  const hostIPs = input.hostIPs?.length ? input.hostIPs : [input.hostIP];
  switch (label) {
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'spec.terminationGracePeriodSeconds':
      return String(pod.spec?.terminationGracePeriodSeconds ?? 30);
    case 'status.hostIP':
      return hostIPs[0] ?? '';
    case 'status.hostIPs':
      return hostIPs.join(',');
    case 'status.podIP':
      return podIPs[0] ?? '';
    case 'status.podIPs':
      return podIPs.join(',');
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace || 'default';
    case 'metadata.uid':
      return meta.uid ?? '';
  }
  throw new ContainerConfigError(`unsupported fieldPath: ${fieldPath}`);
}

// --- downward API: resourceFieldRef ---

type ResourceKind = 'cpu' | 'memory' | 'ephemeral-storage';

function defaultAllocatable(input: EnvironmentInput): Required<NodeAllocatable> {
  const given = input.nodeAllocatable;
  const cpuMilli = given?.cpuMilli ?? cpus().length * 1000;
  const memoryBytes = given?.memoryBytes ?? totalmem();
  let ephemeralStorageBytes = given?.ephemeralStorageBytes;
  if (ephemeralStorageBytes === undefined) {
    try {
      const st = statfsSync(input.sandboxDir || '/');
      ephemeralStorageBytes = st.blocks * st.bsize;
    } catch {
      ephemeralStorageBytes = 0;
    }
  }
  return { cpuMilli, memoryBytes, ephemeralStorageBytes };
}

function parseResourceQuantity(s: string | number, what: string): Quantity {
  try {
    return parseQuantity(String(s));
  } catch (err) {
    throw new ContainerConfigError(`invalid quantity ${JSON.stringify(String(s))} for ${what}: ${(err as Error).message}`);
  }
}

/** Ceiling of a / b for positive b. */
function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a > 0n === b > 0n ? q + 1n : q;
}

/**
 * containerResourceRuntimeValue: the container's limit or request (an unset limit is the node's
 * allocatable, as defaultPodLimitsForDownwardAPI sets it; an unset request falls back to the limit
 * as API defaulting does), divided by the divisor and rounded up.
 */
export function containerResourceRuntimeValue(ref: { containerName?: string; resource: string; divisor?: string | number }, input: EnvironmentInput): string {
  let target: Container = input.container;
  if (ref.containerName) {
    const all = [...(input.pod.spec?.initContainers ?? []), ...(input.pod.spec?.containers ?? [])];
    const found = all.find((c) => c.name === ref.containerName);
    if (!found) throw new ContainerConfigError(`container ${ref.containerName} not found`);
    target = found;
  }
  const dot = ref.resource.indexOf('.');
  const kind = ref.resource.slice(0, dot);
  const name = ref.resource.slice(dot + 1) as ResourceKind;
  if (dot < 0 || (kind !== 'limits' && kind !== 'requests') || !['cpu', 'memory', 'ephemeral-storage'].includes(name)) {
    throw new ContainerConfigError(`unsupported container resource : ${ref.resource}`);
  }
  const divisorText = ref.divisor === undefined || ref.divisor === '' ? '1' : ref.divisor;
  let divisor = parseResourceQuantity(divisorText, 'divisor');
  if (divisor.milliValue() === 0n) divisor = parseQuantity('1');

  const limits = target.resources?.limits ?? {};
  const requests = target.resources?.requests ?? {};
  const quantityOf = (v: string | number | undefined) => (v === undefined || v === '' ? undefined : parseResourceQuantity(v, `${kind}.${name}`));
  let q: Quantity | undefined;
  if (kind === 'requests') {
    q = quantityOf(requests[name]) ?? quantityOf(limits[name]);
  } else {
    q = quantityOf(limits[name]);
    // An unset or zero limit is the node's allocatable.
    if (q && q.milliValue() === 0n) q = undefined;
  }

  if (name === 'cpu') {
    let milli: bigint;
    if (q) milli = q.milliValue();
    else if (kind === 'limits') milli = BigInt(Math.round(defaultAllocatable(input).cpuMilli));
    else milli = 0n;
    return ceilDiv(milli, divisor.milliValue()).toString();
  }
  let value: bigint;
  if (q) value = q.value();
  else if (kind === 'limits') {
    const alloc = defaultAllocatable(input);
    value = BigInt(Math.round(name === 'memory' ? alloc.memoryBytes : alloc.ephemeralStorageBytes));
  } else value = 0n;
  const d = divisor.value() === 0n ? 1n : divisor.value();
  return ceilDiv(value, d).toString();
}
