// v1 defaulting of a Pod as the API server applies it (pkg/apis/core/v1/defaults.go), then what
// the kubelet adds to a static pod read from a file (pkg/kubelet/config/common.go applyDefaults):
// a content-derived UID, the default namespace, nodeName, the config annotations and toleration.

import type { Container, ObjectMeta, Pod, Probe, Secret } from './types.js';
import type { LifecycleHandler } from './types.js';
import { canonicalQuantity, QuantityError } from './quantity.js';
import { builtin } from '../util/builtins.js';

const { createHash } = builtin('node:crypto');

export const defaultNamespace = 'default';
export const defaultTerminationGracePeriodSeconds = 30;
export const defaultSchedulerName = 'default-scheduler';
export const terminationMessagePathDefault = '/dev/termination-log';
/** Mode bits of secret, configMap, downwardAPI and projected volumes (0644). */
export const defaultVolumeMode = 0o644;

export const configSourceAnnotation = 'kubernetes.io/config.source';
export const configHashAnnotation = 'kubernetes.io/config.hash';

type Json = Record<string, unknown>;

/** The image's tag as the kubelet's ParseImageName sees it: `latest` when neither tag nor digest. */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > slash) return name.slice(colon + 1);
  return at >= 0 ? '' : 'latest';
}

/** Always for `:latest` (or no tag), IfNotPresent otherwise (SetDefaults_Container). */
export function defaultImagePullPolicy(image: string | undefined): 'Always' | 'IfNotPresent' {
  if (!image) return 'IfNotPresent';
  return imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultResourceList(list: Record<string, string> | undefined): void {
  if (!list) return;
  for (const [k, v] of Object.entries(list)) {
    try {
      // SetDefaults_ResourceList rounds up to milli precision; serialization prints canonical form.
      list[k] = canonicalQuantity(String(v));
    } catch (err) {
      // Left as written: validation reports the unparsable quantity.
      if (!(err instanceof QuantityError)) throw err;
    }
  }
}

function defaultHTTPGet(h: { path?: string; scheme?: string } | undefined): void {
  if (!h) return;
  if (!h.path) h.path = '/';
  if (!h.scheme) h.scheme = 'HTTP';
}

function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  if (!p.timeoutSeconds) p.timeoutSeconds = 1;
  if (!p.periodSeconds) p.periodSeconds = 10;
  if (!p.successThreshold) p.successThreshold = 1;
  if (!p.failureThreshold) p.failureThreshold = 3;
  defaultHTTPGet(p.httpGet);
  // GRPCAction.service `+default=""` (since 1.24; kubectl describe reads it without a nil check).
  if (p.grpc && (p.grpc.service === undefined || p.grpc.service === null)) p.grpc.service = '';
}

/** A ResourceFieldSelector's divisor, a Quantity the API server always writes (`"0"` when unset). */
function defaultResourceFieldRef(ref: { divisor?: unknown } | undefined): void {
  if (ref && (ref.divisor === undefined || ref.divisor === null)) ref.divisor = '0';
}

function defaultHandler(h: LifecycleHandler | undefined): void {
  if (h) defaultHTTPGet(h.httpGet);
}

function defaultContainer(c: Container): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = defaultImagePullPolicy(c.image);
  if (!c.terminationMessagePath) c.terminationMessagePath = terminationMessagePathDefault;
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  // The API server's encoding always carries a container's resources (`resources: {}`).
  c.resources ??= {};
  for (const port of c.ports ?? []) if (!port.protocol) port.protocol = 'TCP';
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.fieldRef;
    if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
    defaultResourceFieldRef(e.valueFrom?.resourceFieldRef);
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  defaultHandler(c.lifecycle?.postStart);
  defaultHandler(c.lifecycle?.preStop);
  if (c.resources) {
    defaultResourceList(c.resources.limits as Record<string, string> | undefined);
    defaultResourceList(c.resources.requests as Record<string, string> | undefined);
  }
}

/** SetDefaults_Pod: requests default to limits, key by key, where not given. */
function defaultRequestsFromLimits(c: Container): void {
  const limits = c.resources?.limits;
  if (!limits) return;
  const requests = (c.resources!.requests ??= {});
  for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
}

function defaultVolumes(volumes: Json[] | undefined): void {
  for (const v of volumes ?? []) {
    const sources = Object.keys(v).filter((k) => k !== 'name');
    if (sources.length === 0) v.emptyDir = {};
    for (const kind of ['secret', 'configMap', 'downwardAPI', 'projected']) {
      const src = v[kind] as Json | undefined;
      if (src && src.defaultMode === undefined) src.defaultMode = defaultVolumeMode;
    }
    for (const item of ((v.downwardAPI as Json | undefined)?.items as Json[] | undefined) ?? []) {
      const ref = item.fieldRef as Json | undefined;
      if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
      defaultResourceFieldRef(item.resourceFieldRef as Json | undefined);
    }
    for (const proj of ((v.projected as Json | undefined)?.sources as Json[] | undefined) ?? []) {
      const token = proj.serviceAccountToken as Json | undefined;
      if (token && token.expirationSeconds === undefined) token.expirationSeconds = 3600;
      for (const item of ((proj.downwardAPI as Json | undefined)?.items as Json[] | undefined) ?? []) {
        const ref = item.fieldRef as Json | undefined;
        if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
        defaultResourceFieldRef(item.resourceFieldRef as Json | undefined);
      }
    }
    const hostPath = v.hostPath as Json | undefined;
    if (hostPath && hostPath.type === undefined) hostPath.type = '';
    const claimSpec = ((v.ephemeral as Json | undefined)?.volumeClaimTemplate as Json | undefined)?.spec as Json | undefined;
    if (claimSpec && claimSpec.volumeMode === undefined) claimSpec.volumeMode = 'Filesystem';
  }
}

/**
 * SetDefaults_PodSpec and the defaulters reached through a pod spec (containers, probes, volumes):
 * what a Pod and every pod template get. Changes spec in place.
 */
export function defaultPodSpec(spec: NonNullable<Pod['spec']>): void {
  spec.containers ??= [];
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  spec.securityContext ??= {};
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    spec.terminationGracePeriodSeconds = defaultTerminationGracePeriodSeconds;
  } else if (spec.terminationGracePeriodSeconds < 0) {
    // Since v1.27 a negative grace period is stored as 1 (the minimum that still signals).
    spec.terminationGracePeriodSeconds = 1;
  }
  if (!spec.schedulerName) spec.schedulerName = defaultSchedulerName;
  const podResources = (spec as { resources?: { limits?: Record<string, string>; requests?: Record<string, string> } }).resources;
  defaultResourceList(podResources?.limits);
  defaultResourceList(podResources?.requests);
  for (const c of spec.containers) defaultContainer(c);
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  for (const c of spec.ephemeralContainers ?? []) defaultContainer(c as Container);
  defaultVolumes(spec.volumes as Json[] | undefined);
}

/**
 * Applies v1 defaulting to a copy of pod (what the API server stores for a created pod):
 * SetDefaults_Pod, which only a Pod gets (not a template), then defaultPodSpec.
 */
export function applyV1Defaults(input: Pod): Pod {
  const pod = structuredClone(input);
  pod.metadata ??= {};
  const spec = (pod.spec ??= { containers: [] });
  spec.containers ??= [];
  // SetDefaults_Pod
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) defaultRequestsFromLimits(c);
  const podResources = (spec as { resources?: { limits?: Record<string, string>; requests?: Record<string, string> } }).resources;
  if (podResources?.limits) {
    // Pod-level resources: requests not given default to the pod's limits.
    const requests = (podResources.requests ??= {});
    for (const [k, v] of Object.entries(podResources.limits)) if (!(k in requests)) requests[k] = v;
  }
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null) spec.enableServiceLinks = true;
  if (spec.hostNetwork === true) {
    // defaultHostNetworkPorts: with the host's network the container port is the host port.
    for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
      for (const port of c.ports ?? []) if (!port.hostPort) port.hostPort = port.containerPort;
    }
  }
  defaultPodSpec(spec);
  return pod;
}

/** JSON with object keys sorted, so equal objects encode identically whatever their key order. */
export function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Json)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJSON(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The UID the kubelet gives a static pod without one: the hex md5 of the encoded (defaulted) pod
 * followed by `host:<nodeName>` and, for a pod read from a file, `file:<path>`.
 */
export function staticPodUID(defaulted: Pod, nodeName: string, path?: string): string {
  const h = createHash('md5');
  h.update(canonicalJSON(defaulted));
  h.update(`host:${nodeName}`);
  if (path !== undefined) h.update(`file:${path}`);
  return h.digest('hex');
}

/** Five characters of the name generator's alphabet, derived from the UID so they are stable. */
function nameSuffix(uid: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const digest = createHash('md5').update(uid).digest();
  return Array.from(digest.subarray(0, 5), (b) => alphabet[b % alphabet.length]).join('');
}

export interface DefaultPodOptions {
  /** This host's node name (the kubelet's lowercased hostname). */
  nodeName: string;
  /** The config source, for the `kubernetes.io/config.source` annotation (e.g. `file`). */
  source: string;
  /** Absolute path of the manifest the pod was read from, hashed into the UID as the kubelet does. */
  path?: string;
}

/** v1 defaults plus the kubelet's static-pod defaults; returns a new object. */
export function defaultPod(input: Pod, opts: DefaultPodOptions): Pod {
  const pod = applyV1Defaults(input);
  // ObjectMeta's uid is typed read-only (server-set); here this code is the server.
  const meta = pod.metadata! as { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] };
  if (!meta.uid) meta.uid = staticPodUID(pod, opts.nodeName, opts.path);
  if (!meta.name && meta.generateName) meta.name = meta.generateName + nameSuffix(meta.uid);
  if (!meta.namespace) meta.namespace = defaultNamespace;
  pod.spec!.nodeName = opts.nodeName;
  meta.annotations = { ...(meta.annotations ?? {}), [configHashAnnotation]: meta.uid, [configSourceAnnotation]: opts.source };
  if (opts.source === 'api') return pod;
  // Static pods tolerate every NoExecute taint so node problems never evict them.
  const tolerations = (pod.spec!.tolerations ??= []);
  if (!tolerations.some((t) => t.operator === 'Exists' && t.effect === 'NoExecute' && !t.key)) {
    tolerations.push({ operator: 'Exists', effect: 'NoExecute' });
  }
  return pod;
}

/** SetDefaults_Secret plus what the API server does on write: stringData merged into data. */
export function defaultSecret(input: Secret): Secret {
  const secret = structuredClone(input) as Secret & { stringData?: Record<string, string> };
  secret.metadata ??= {};
  if (!secret.metadata.namespace) secret.metadata.namespace = defaultNamespace;
  if (!secret.type) secret.type = 'Opaque';
  if (secret.stringData) {
    secret.data = { ...(secret.data ?? {}) };
    for (const [k, v] of Object.entries(secret.stringData)) secret.data[k] = Buffer.from(v, 'utf8').toString('base64');
    delete secret.stringData;
  }
  return secret;
}
