// Image pulling before a container starts, as the kubelet's image manager (EnsureImageExists):
// the `:latest` default tag, imagePullPolicy, imagePullSecrets (dockerconfigjson) matched to the
// image's registry, the image pull back-off, and the kubelet's events and waiting reasons. On a
// runtime without images nothing is pulled, and one event per pod says its images are not used.

import type { Container, Pod, Secret } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { AuthConfig, Image, ImageService, PodSandboxConfig } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import { formatGoDuration, goQuote } from '../util/go-format.js';
import { Backoff } from './backoff.js';
import { containerRef, podRef } from './format.js';
import { grpcCodeName } from '../util/grpc-codes.js';

// Waiting reasons (kubelet images/types.go).
export const ErrImagePull = 'ErrImagePull';
export const ErrImagePullBackOff = 'ImagePullBackOff';
export const ErrImageNeverPull = 'ErrImageNeverPull';
export const ErrInvalidImageName = 'InvalidImageName';
export const ErrImageInspect = 'ImageInspectError';

/** The image pull back-off: 10 s doubling to 300 s, per pod and image (the kubelet's imageBackOff). */
export function newImageBackoff(clock: Clock, initialMs = 10_000, maxMs = 300_000): Backoff {
  return new Backoff(clock, initialMs, maxMs);
}

export interface ImageDeps {
  images: ImageService;
  clock: Clock;
  recorder: EventRecorder;
  backoff: Backoff;
  secret(namespace: string, name: string): Secret | undefined;
  /** The node's own credentials (its docker config.json files), after the pod's pull secrets. */
  nodeCredentials?(): Secret[];
}

/** On success, `image` is the runtime's status of the image when it was asked for (reused for the container's config). */
export type EnsureImageResult = { ok: true; imageRef: string; image?: Image } | { ok: false; reason: string; message: string };

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

// The reference grammar of distribution/reference.
const alnum = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alnum}(?:${separator}${alnum})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domain = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const tagPattern = '[\\w][\\w.-]{0,127}';
const digestPattern = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const referenceRe = new RegExp(`^((?:${domain}/)?${pathComponent}(?:/${pathComponent})*)(?::(${tagPattern}))?(?:@(${digestPattern}))?$`);

export interface ImageReference {
  /** Registry host (`docker.io` when the name has none). */
  domain: string;
  /** Repository path within the registry (`library/busybox` for a short Docker Hub name). */
  path: string;
  tag: string;
  digest: string;
}

/** Parses an image name as the kubelet's parsers.ParseImageName; throws with its message. */
export function parseImageName(image: string): ImageReference {
  const m = referenceRe.exec(image);
  if (!m || m[1]!.length > 255) {
    const why = m
      ? 'repository name must not be more than 255 characters'
      : /[A-Z]/.test(image.split(/[:@]/)[0] ?? '') && referenceRe.test(image.toLowerCase())
        ? 'repository name must be lowercase'
        : 'invalid reference format';
    throw new Error(`couldn't parse image name ${goQuote(image)}: ${why}`);
  }
  const name = m[1]!;
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  let dom = 'docker.io';
  let path = name;
  if (first && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase())) {
    dom = first;
    path = name.slice(slash + 1);
  }
  if (dom === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  const digest = m[3] ?? '';
  return { domain: dom, path, tag: m[2] ?? (digest ? '' : 'latest'), digest };
}

/** applyDefaultImageTag: `busybox` → `busybox:latest`; names with a tag or digest stay as they are. */
export function applyDefaultImageTag(image: string): string {
  const ref = parseImageName(image);
  if (!ref.digest && ref.tag && !image.endsWith(`:${ref.tag}`)) return `${image}:${ref.tag}`;
  return image;
}

/** shouldPullImage: Never never pulls, IfNotPresent pulls when absent, Always always. */
export function shouldPullImage(policy: string | undefined, present: boolean): boolean {
  if (policy === 'Never') return false;
  if (policy === 'Always') return true;
  return !present;
}

function normalizeHost(host: string): string {
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

/**
 * The credentials of the pull secrets that apply to image, most specific first (the kubelet's
 * keyring lookup: a key matches on the registry host and, when it has one, a repository path prefix).
 */
export function credentialsFor(image: string, secrets: Secret[]): AuthConfig[] {
  const ref = parseImageName(image);
  const found: Array<{ auth: AuthConfig; specificity: number }> = [];
  for (const s of secrets) {
    for (const [key, entry] of Object.entries(dockerConfigEntries(s))) {
      const loc = key.replace(/^[a-z]+:\/\//, '').replace(/\/+$/, '');
      const slash = loc.indexOf('/');
      const host = normalizeHost(slash < 0 ? loc : loc.slice(0, slash));
      let path = slash < 0 ? '' : loc.slice(slash + 1);
      if (path === 'v1' || path === 'v2') path = '';
      if (host !== normalizeHost(ref.domain)) continue;
      if (path && ref.path !== path && !ref.path.startsWith(`${path}/`)) continue;
      // No serverAddress: the match is made here, and runtimes compare it with their own idea of the
      // registry's host (containerd's docker.io host differs from the key's index.docker.io).
      const auth: AuthConfig = {};
      let { username, password } = entry;
      if (entry.auth && !username) {
        const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon > 0) {
          username = decoded.slice(0, colon);
          password = decoded.slice(colon + 1);
        }
      }
      if (username) auth.username = username;
      if (password) auth.password = password;
      if (entry.identitytoken) auth.identityToken = entry.identitytoken;
      if (entry.registrytoken) auth.registryToken = entry.registrytoken;
      found.push({ auth, specificity: path.length });
    }
  }
  return found.sort((a, b) => b.specificity - a.specificity).map((f) => f.auth);
}

interface DockerConfigEntry {
  username?: string;
  password?: string;
  auth?: string;
  identitytoken?: string;
  registrytoken?: string;
}

/** The registry entries of a dockerconfigjson (or legacy dockercfg) Secret; none for other secrets. */
function dockerConfigEntries(s: Secret): Record<string, DockerConfigEntry> {
  const raw = (key: string): string | undefined => {
    if (s.stringData?.[key] !== undefined) return s.stringData[key];
    const b64 = s.data?.[key];
    return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
  };
  try {
    const json = raw('.dockerconfigjson');
    if (json !== undefined) return (JSON.parse(json) as { auths?: Record<string, DockerConfigEntry> }).auths ?? {};
    const cfg = raw('.dockercfg');
    if (cfg !== undefined) return JSON.parse(cfg) as Record<string, DockerConfigEntry>;
  } catch {
    // A malformed secret gives no credentials, as the kubelet's keyring skips it.
  }
  return {};
}

/** A runtime error as the kubelet shows a gRPC error: `rpc error: code = X desc = …`. */
function pullErrorMessage(e: unknown): string {
  const g = e as { code?: unknown; details?: unknown };
  if (typeof g.code === 'number' && typeof g.details === 'string') return `rpc error: code = ${grpcCodeName(g.code)} desc = ${g.details}`;
  if (e instanceof Error && e.name === 'NotFoundError') return `rpc error: code = NotFound desc = ${e.message}`;
  return messageOf(e);
}

/** The pod's pull secrets; a missing one is reported on the pod and skipped (getPullSecretsForPod). */
function pullSecrets(deps: ImageDeps, pod: Pod): Secret[] {
  const ns = pod.metadata?.namespace || 'default';
  const found: Secret[] = [];
  const missing: string[] = [];
  for (const ref of pod.spec?.imagePullSecrets ?? []) {
    if (!ref.name) continue;
    const s = deps.secret(ns, ref.name);
    if (s) found.push(s);
    else missing.push(ref.name);
  }
  if (missing.length) {
    deps.recorder.event(
      podRef(pod),
      'Warning',
      'FailedToRetrieveImagePullSecret',
      `Unable to retrieve some image pull secrets (${missing.join(', ')}); attempting to pull the image may not succeed.`,
    );
  }
  return found;
}

/** EnsureImageExists: the image's reference in the runtime once present, or the waiting reason. */
export async function ensureImageExists(deps: ImageDeps, pod: Pod, container: Container, sandboxConfig?: PodSandboxConfig): Promise<EnsureImageResult> {
  const ref = containerRef(pod, container.name);
  const requested = container.image ?? '';
  let image: string;
  try {
    image = applyDefaultImageTag(requested);
  } catch (e) {
    const msg = `Failed to apply default image tag ${goQuote(requested)}: ${messageOf(e)}`;
    deps.recorder.event(ref, 'Warning', 'InspectFailed', msg);
    return { ok: false, reason: ErrInvalidImageName, message: msg };
  }

  let present: string | undefined;
  let status: Image | null;
  try {
    status = await deps.images.imageStatus({ image });
    present = status?.id || undefined;
  } catch (e) {
    const msg = `Failed to inspect image ${goQuote(requested)}: ${pullErrorMessage(e)}`;
    deps.recorder.event(ref, 'Warning', 'InspectFailed', msg);
    return { ok: false, reason: ErrImageInspect, message: msg };
  }

  if (!shouldPullImage(container.imagePullPolicy, present !== undefined)) {
    if (present !== undefined) {
      deps.recorder.event(ref, 'Normal', 'Pulled', `Container image ${goQuote(requested)} already present on machine`);
      return { ok: true, imageRef: present, image: status! };
    }
    const msg = `Container image ${goQuote(requested)} is not present with pull policy of Never`;
    deps.recorder.event(ref, 'Warning', ErrImageNeverPull, msg);
    return { ok: false, reason: ErrImageNeverPull, message: msg };
  }

  const backOffKey = `${pod.metadata?.uid ?? ''}_${requested}`;
  if (deps.backoff.isInBackOffSinceUpdate(backOffKey)) {
    const msg = `Back-off pulling image ${goQuote(requested)}`;
    deps.recorder.event(ref, 'Normal', 'BackOff', msg);
    return { ok: false, reason: ErrImagePullBackOff, message: msg };
  }

  deps.recorder.event(ref, 'Normal', 'Pulling', `Pulling image ${goQuote(requested)}`);
  const start = deps.clock.now();
  const creds = [...credentialsFor(image, pullSecrets(deps, pod)), ...credentialsFor(image, deps.nodeCredentials?.() ?? [])];
  const errors: string[] = [];
  let imageRef: string | undefined;
  for (const auth of creds.length ? creds : [undefined]) {
    try {
      imageRef = await deps.images.pullImage({ image }, auth, sandboxConfig);
      break;
    } catch (e) {
      errors.push(pullErrorMessage(e));
    }
  }
  if (imageRef === undefined) {
    const err = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
    deps.recorder.event(ref, 'Warning', 'Failed', `Failed to pull image ${goQuote(requested)}: ${err}`);
    deps.backoff.next(backOffKey, deps.clock.now());
    return { ok: false, reason: ErrImagePull, message: err };
  }
  const took = formatGoDuration(Math.floor(deps.clock.now() - start));
  const pulled = await deps.images.imageStatus({ image: imageRef }).catch(() => null);
  const size = pulled?.size ?? 0;
  deps.recorder.event(
    ref,
    'Normal',
    'Pulled',
    `Successfully pulled image ${goQuote(requested)} in ${took} (${took} including waiting). Image size: ${size} bytes.`,
  );
  deps.backoff.gc();
  return { ok: true, imageRef, ...(pulled ? { image: pulled } : {}) };
}

/** The reason of the event that says a pod's images are not used (a runtime without images). */
export const ImageNotUsedReason = 'ImageNotUsed';

/**
 * On a runtime without images (the process runtime): the image only names what runs, so there is no
 * pull, no policy and no `Pulling`/`Pulled` event. The reference recorded for the container is the
 * runtime's record of the name (`process://busybox:latest`).
 */
export async function unusedImage(images: ImageService, container: Container): Promise<EnsureImageResult> {
  const requested = container.image ?? '';
  let image = requested;
  try {
    image = applyDefaultImageTag(requested);
  } catch {
    // Not a reference at all: recorded as written, since nothing is pulled.
  }
  const status = await images.imageStatus({ image }).catch(() => null);
  return { ok: true, imageRef: status?.id ?? image, ...(status ? { image: status } : {}) };
}

/**
 * The Normal event, once per pod, that its images are not used: which images, and what runs instead.
 * Undefined for a pod that names none.
 */
export function imageNotUsedMessage(pod: Pod, runtimeName: string): string | undefined {
  const named = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.image ?? '').filter((i) => i !== '');
  const images = [...new Set(named)].map(goQuote);
  if (images.length === 0) return undefined;
  const which = images.length === 1 ? `Image ${images[0]} is` : `Images ${images.join(', ')} are`;
  return `${which} not used by the ${runtimeName} runtime: nothing is pulled, each container runs its command as a host process (--runtime=containerd runs images)`;
}
