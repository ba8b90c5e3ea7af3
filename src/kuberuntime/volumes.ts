// Pod volumes on the host for a runtime with mount namespaces, as the kubelet's volume manager sets
// them up before the sandbox runs: emptyDir (disk, or tmpfs for medium Memory with its sizeLimit),
// hostPath with its type check, configMap, secret, downwardAPI and projected files (service-account
// tokens included, from the lookup's token manager), persistentVolumeClaim (the bound volume's hostPath
// or local path, as the kubelet's desired state of the world populator resolves a claim to its
// PersistentVolume); and each
// container's volumeMounts (readOnly, subPath, subPathExpr, propagation) as CRI Mounts. The projected
// kinds go through the atomic writer and are projected again on each pod sync.
//
// Layout, as the kubelet's: `<sandbox dir>/volumes/kubernetes.io~<plugin>/<volume name>`.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { promisify } from 'node:util';
import { parseQuantity } from '../api/quantity.js';
import type { Container, Pod } from '../api/types.js';
import type { Mount } from '../runtime/cri.js';
import { sandboxDir } from '../runtime/root-dir.js';
import { writePayload, type PayloadFile } from './atomic-writer.js';
import {
  ContainerConfigError,
  containerResourceRuntimeValue,
  expand,
  podFieldSelectorRuntimeValue,
  type NodeAllocatable,
  type ObjectLookup,
} from './envvars.js';

const run = promisify(execFile);

type Volume = NonNullable<NonNullable<Pod['spec']>['volumes']>[number];
type KeyToPath = { key: string; path: string; mode?: number };

/** A volume that could not be set up (the kubelet's FailedMount). */
export class VolumeError extends Error {
  constructor(
    readonly volume: string,
    message: string,
  ) {
    super(message);
    this.name = 'VolumeError';
  }
}

export interface VolumeDeps {
  rootDir: string;
  lookup: ObjectLookup;
  hostIP: string;
  nodeAllocatable?: NodeAllocatable;
  /** Names each payload directory of the atomic writer. */
  now(): Date;
}

/** A set-up volume: its host path and whether the kubelet always mounts it read-only. */
export interface HostVolume {
  hostPath: string;
  readOnly: boolean;
}

export function volumesDir(rootDir: string, podUid: string): string {
  return join(sandboxDir(rootDir, podUid), 'volumes');
}

function pluginDir(v: Volume): string {
  if (v.emptyDir) return 'kubernetes.io~empty-dir';
  if (v.configMap) return 'kubernetes.io~configmap';
  if (v.secret) return 'kubernetes.io~secret';
  if (v.downwardAPI) return 'kubernetes.io~downward-api';
  if (v.projected) return 'kubernetes.io~projected';
  return 'kubernetes.io~other';
}

/** Sets up every volume of the pod (idempotent); throws VolumeError for the first that fails. */
export async function setUpVolumes(deps: VolumeDeps, pod: Pod): Promise<Map<string, HostVolume>> {
  const out = new Map<string, HostVolume>();
  const uid = pod.metadata?.uid ?? '';
  for (const v of pod.spec?.volumes ?? []) {
    if (v.hostPath) {
      try {
        await checkHostPath(v.hostPath.path, v.hostPath.type ?? '');
      } catch (e) {
        throw new VolumeError(v.name, `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`);
      }
      out.set(v.name, { hostPath: v.hostPath.path, readOnly: false });
      continue;
    }
    if (v.persistentVolumeClaim) {
      out.set(v.name, await claimVolume(deps, pod, v.name, v.persistentVolumeClaim));
      continue;
    }
    const dir = join(volumesDir(deps.rootDir, uid), pluginDir(v), v.name);
    try {
      if (v.emptyDir) {
        await setUpEmptyDir(dir, v.emptyDir.medium ?? '', v.emptyDir.sizeLimit);
        out.set(v.name, { hostPath: dir, readOnly: false });
      } else if (isProjected(v)) {
        await writePayload(dir, projectFiles(deps, pod, v), deps.now());
        out.set(v.name, { hostPath: dir, readOnly: true });
      } else {
        throw new Error('volume type not supported on this node (emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim are)');
      }
    } catch (e) {
      if (e instanceof VolumeError) throw e;
      throw new VolumeError(v.name, `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`);
    }
  }
  return out;
}

/**
 * A persistentVolumeClaim volume: the claim, bound, and its volume's path (getPVCExtractPV and the
 * hostPath and local plugins' SetUp), in the volume manager's words when it cannot be had.
 */
async function claimVolume(deps: VolumeDeps, pod: Pod, volume: string, source: { claimName: string; readOnly?: boolean }): Promise<HostVolume> {
  const ns = pod.metadata?.namespace ?? 'default';
  const claimName = source.claimName;
  const { persistentVolumeClaim, persistentVolume } = deps.lookup;
  const fail = (why: string) =>
    new VolumeError(
      volume,
      `Unable to attach or mount volumes: unmounted volumes=[${volume}], unattached volumes=[], failed to process volumes=[${volume}]: error processing PVC ${ns}/${claimName}: ${why}`,
    );
  if (!persistentVolumeClaim || !persistentVolume) {
    throw new VolumeError(
      volume,
      `MountVolume.SetUp failed for volume "${volume}" : volume type not supported on this node (the node keeps no PersistentVolumeClaims)`,
    );
  }
  const claim = persistentVolumeClaim.call(deps.lookup, ns, claimName);
  if (!claim) throw fail(`failed to fetch PVC from API server: persistentvolumeclaims "${claimName}" not found`);
  if (claim.metadata?.deletionTimestamp) throw fail("can't start pod because PVC is being deleted");
  const pvName = claim.spec?.volumeName ?? '';
  if (claim.status?.phase !== 'Bound' || !pvName) throw fail('PVC is not bound');
  const pv = persistentVolume.call(deps.lookup, pvName);
  if (!pv) throw fail(`failed to fetch PV ${pvName} from API server: persistentvolumes "${pvName}" not found`);
  const ref = pv.spec?.claimRef;
  if (ref?.uid && ref.uid !== claim.metadata?.uid) throw fail(`failed to fetch PV ${pvName} from API server: the PV's claimRef is not this claim`);
  const readOnly = source.readOnly ?? false;
  try {
    if (pv.spec?.hostPath) {
      await checkHostPath(pv.spec.hostPath.path, pv.spec.hostPath.type ?? '');
      return { hostPath: pv.spec.hostPath.path, readOnly };
    }
    if (pv.spec?.local) {
      if (!(await stat(pv.spec.local.path).catch(() => undefined))) throw new Error(`path "${pv.spec.local.path}" does not exist`);
      return { hostPath: pv.spec.local.path, readOnly };
    }
  } catch (e) {
    throw new VolumeError(volume, `MountVolume.SetUp failed for volume "${pvName}" : ${(e as Error).message}`);
  }
  throw new VolumeError(
    volume,
    `MountVolume.SetUp failed for volume "${pvName}" : volume type not supported on this node (hostPath and local PersistentVolumes are)`,
  );
}

function isProjected(v: Volume): boolean {
  return Boolean(v.configMap || v.secret || v.downwardAPI || v.projected);
}

/** A digest of a payload, to tell whether a refresh changes anything. */
function payloadDigest(files: PayloadFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    h.update(`${f.path}\0${f.mode}\0${f.data.length}\0`);
    h.update(f.data);
  }
  return h.digest('hex');
}

/**
 * Projects the configMap, secret, downwardAPI and projected volumes again, as the kubelet's volume
 * manager remounts them on every pod sync: the objects and the pod's metadata as they are now,
 * swapped in atomically where they changed. `written` holds each volume's last payload digest (kept
 * by the caller between syncs). Throws VolumeError for the first volume that cannot be projected;
 * its files stay as they were.
 */
export async function refreshProjectedVolumes(deps: VolumeDeps, pod: Pod, written: Map<string, string>): Promise<void> {
  const uid = pod.metadata?.uid ?? '';
  for (const v of pod.spec?.volumes ?? []) {
    if (!isProjected(v)) continue;
    try {
      const files = projectFiles(deps, pod, v);
      const digest = payloadDigest(files);
      if (written.get(v.name) === digest) continue;
      await writePayload(join(volumesDir(deps.rootDir, uid), pluginDir(v), v.name), files, deps.now());
      written.set(v.name, digest);
    } catch (e) {
      throw new VolumeError(v.name, `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`);
    }
  }
}

/** Unmounts what setUpVolumes mounted (tmpfs emptyDirs) and removes the pod's volume directories. */
export async function tearDownVolumes(rootDir: string, podUid: string): Promise<void> {
  const base = volumesDir(rootDir, podUid);
  const empty = join(base, 'kubernetes.io~empty-dir');
  for (const name of await readdir(empty).catch(() => [] as string[])) {
    await run('umount', [join(empty, name)]).catch(() => {});
  }
  await rm(base, { recursive: true, force: true });
}

async function isMountPoint(dir: string): Promise<boolean> {
  try {
    const [a, b] = await Promise.all([stat(dir), stat(join(dir, '..'))]);
    return a.dev !== b.dev;
  } catch {
    return false;
  }
}

async function setUpEmptyDir(dir: string, medium: string, sizeLimit: string | number | undefined): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o777);
  if (medium === 'Memory') {
    if (await isMountPoint(dir)) return;
    const opts = ['mode=0777'];
    if (sizeLimit !== undefined && sizeLimit !== '') {
      const bytes = Number(parseQuantity(String(sizeLimit)).value());
      if (bytes > 0) opts.push(`size=${bytes}`);
    }
    await run('mount', ['-t', 'tmpfs', '-o', opts.join(','), 'tmpfs', dir]);
  } else if (medium && medium !== 'Memory') {
    throw new Error(`unsupported emptyDir medium ${JSON.stringify(medium)}`);
  }
}

/** hostPath's type check (checkType in the kubelet's host_path.go). */
export async function checkHostPath(path: string, type: string): Promise<void> {
  const st = await stat(path).catch(() => undefined);
  const fail = (what: string) => {
    throw new Error(`hostPath type check failed: ${path} is not ${what}`);
  };
  switch (type) {
    case '':
      return;
    case 'DirectoryOrCreate':
      if (!st) await mkdir(path, { recursive: true, mode: 0o755 });
      else if (!st.isDirectory()) fail('a directory');
      return;
    case 'FileOrCreate':
      if (!st) await writeFile(path, '', { mode: 0o644, flag: 'wx' }).catch((e) => (e.code === 'EEXIST' ? undefined : Promise.reject(e)));
      else if (!st.isFile()) fail('a file');
      return;
    case 'Directory':
      if (!st?.isDirectory()) fail('a directory');
      return;
    case 'File':
      if (!st?.isFile()) fail('a file');
      return;
    case 'Socket':
      if (!st?.isSocket()) fail('a socket file');
      return;
    case 'CharDevice':
      if (!st?.isCharacterDevice()) fail('a character device');
      return;
    case 'BlockDevice':
      if (!st?.isBlockDevice()) fail('a block device');
      return;
    default:
      throw new Error(`hostPath type check failed: ${path}: unknown type ${JSON.stringify(type)}`);
  }
}

function safeRelative(p: string): boolean {
  const n = normalize(p);
  return p !== '' && !p.startsWith('/') && n !== '..' && !n.startsWith(`..${sep}`) && !n.split(sep).includes('..');
}

/** The files of a configMap, secret, downwardAPI or projected volume (the kubelet's payloads). */
function projectFiles(deps: VolumeDeps, pod: Pod, v: Volume): PayloadFile[] {
  const ns = pod.metadata?.namespace || 'default';
  const files: PayloadFile[] = [];
  const fromData = (kind: 'configmap' | 'secret', name: string, items: KeyToPath[] | undefined, optional: boolean | undefined, mode: number) => {
    let data: Map<string, Buffer> | undefined;
    if (kind === 'configmap') {
      const cm = deps.lookup.configMap(ns, name);
      if (cm) {
        data = new Map();
        for (const [k, s] of Object.entries(cm.data ?? {})) data.set(k, Buffer.from(s, 'utf8'));
        for (const [k, b] of Object.entries(cm.binaryData ?? {})) data.set(k, Buffer.from(b, 'base64'));
      }
    } else {
      const sec = deps.lookup.secret(ns, name);
      if (sec) {
        data = new Map();
        for (const [k, b] of Object.entries(sec.data ?? {})) data.set(k, Buffer.from(b, 'base64'));
        for (const [k, s] of Object.entries(sec.stringData ?? {})) data.set(k, Buffer.from(s, 'utf8'));
      }
    }
    if (!data) {
      if (optional) return;
      throw new Error(`${kind === 'configmap' ? 'configmap' : 'secret'} "${name}" not found`);
    }
    if (items?.length) {
      for (const it of items) {
        const d = data.get(it.key);
        if (d === undefined) {
          if (optional) continue;
          throw new Error(kind === 'configmap' ? `configmap references non-existent config key: ${it.key}` : `references non-existent secret key: ${it.key}`);
        }
        files.push({ path: it.path, data: d, mode: it.mode ?? mode });
      }
    } else {
      for (const [k, d] of data) files.push({ path: k, data: d, mode });
    }
  };
  const fromDownward = (items: NonNullable<NonNullable<Volume['downwardAPI']>['items']>, mode: number) => {
    for (const it of items) {
      let value: string;
      if (it.fieldRef) {
        value = podFieldSelectorRuntimeValue(it.fieldRef.apiVersion, it.fieldRef.fieldPath, { pod, podIP: '', hostIP: deps.hostIP });
      } else if (it.resourceFieldRef) {
        const container = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((c) => c.name === it.resourceFieldRef!.containerName);
        if (!container) throw new Error(`container ${it.resourceFieldRef.containerName ?? ''} not found`);
        value = containerResourceRuntimeValue(it.resourceFieldRef, {
          pod,
          container,
          podIP: '',
          hostIP: deps.hostIP,
          lookup: deps.lookup,
          nodeAllocatable: deps.nodeAllocatable,
        });
      } else continue;
      files.push({ path: it.path, data: Buffer.from(value, 'utf8'), mode: it.mode ?? mode });
    }
  };

  if (v.configMap) fromData('configmap', v.configMap.name ?? '', v.configMap.items, v.configMap.optional, v.configMap.defaultMode ?? 0o644);
  else if (v.secret) fromData('secret', v.secret.secretName ?? '', v.secret.items, v.secret.optional, v.secret.defaultMode ?? 0o644);
  else if (v.downwardAPI) fromDownward(v.downwardAPI.items ?? [], v.downwardAPI.defaultMode ?? 0o644);
  else if (v.projected) {
    const mode = v.projected.defaultMode ?? 0o644;
    for (const src of v.projected.sources ?? []) {
      if (src.configMap) fromData('configmap', src.configMap.name ?? '', src.configMap.items, src.configMap.optional, mode);
      else if (src.secret) fromData('secret', src.secret.name ?? '', src.secret.items, src.secret.optional, mode);
      else if (src.downwardAPI) fromDownward(src.downwardAPI.items ?? [], mode);
      else if (src.serviceAccountToken) {
        if (!deps.lookup.serviceAccountToken) throw new Error('projected serviceAccountToken source not supported: this node issues no service account tokens');
        const { audience, expirationSeconds, path } = src.serviceAccountToken;
        const token = deps.lookup.serviceAccountToken(pod, { ...(audience ? { audience } : {}), ...(expirationSeconds ? { expirationSeconds } : {}) });
        files.push({ path, data: Buffer.from(token, 'utf8'), mode });
      } else throw new Error('projected source not supported on this node (configMap, secret, downwardAPI and serviceAccountToken are)');
    }
  }
  for (const f of files) if (!safeRelative(f.path)) throw new Error(`invalid path ${JSON.stringify(f.path)}: must be relative and may not contain '..'`);
  return files;
}

const propagation: Record<string, Mount['propagation']> = {
  None: 'PROPAGATION_PRIVATE',
  HostToContainer: 'PROPAGATION_HOST_TO_CONTAINER',
  Bidirectional: 'PROPAGATION_BIDIRECTIONAL',
};

/**
 * A mount's subPathExpr expanded with the container's environment (ExpandContainerVolumeMounts): a
 * reference to a variable that is unset or empty is an error, and so is an absolute path or one
 * that leaves the volume.
 */
export function expandSubPath(expr: string, env: ReadonlyMap<string, string>): string {
  const missing = new Set<string>();
  const expanded = expand(expr, (key) => {
    const value = env.get(key);
    if (!value) missing.add(key);
    return value ?? '';
  });
  if (missing.size) throw new ContainerConfigError(`failed to prepare subPath for volumeMount: missing value for ${[...missing].sort().join(', ')}`);
  if (isAbsolute(expanded))
    throw new ContainerConfigError(`failed to prepare subPath for volumeMount: error SubPath \`${expanded}\` must not be an absolute path`);
  if (!safeRelative(expanded)) throw new ContainerConfigError(`failed to prepare subPath for volumeMount: error SubPath \`${expanded}\` must not contain '..'`);
  return expanded;
}

/**
 * The container's volumeMounts as CRI Mounts (makeMounts): subPath (or subPathExpr expanded with the
 * container's environment) joined under the volume, created when absent; a symbolic link in it is
 * followed only while it stays inside the volume (as the atomic writer's links do); readOnly from
 * the mount or forced by the volume kind.
 */
export async function containerMounts(
  container: Container,
  volumes: ReadonlyMap<string, HostVolume>,
  env: ReadonlyMap<string, string> = new Map(),
): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const vm of container.volumeMounts ?? []) {
    const vol = volumes.get(vm.name);
    if (!vol) throw new ContainerConfigError(`cannot find volume "${vm.name}" to mount into container "${container.name}"`);
    let hostPath = vol.hostPath;
    const subPath = vm.subPathExpr ? expandSubPath(vm.subPathExpr, env) : vm.subPath;
    if (subPath) {
      if (!safeRelative(subPath)) throw new ContainerConfigError(`invalid subpath "${subPath}": must be relative and may not contain '..'`);
      hostPath = join(vol.hostPath, subPath);
      const st = await lstat(hostPath).catch(() => undefined);
      if (!st) await mkdir(hostPath, { recursive: true, mode: 0o777 });
      else if (st.isSymbolicLink()) {
        const [base, resolved] = await Promise.all([realpath(vol.hostPath), realpath(hostPath).catch(() => '')]);
        if (!resolved || (resolved !== base && !resolved.startsWith(`${base}${sep}`))) {
          throw new ContainerConfigError(`subpath "${subPath}" is a symbolic link out of the volume, which is not allowed`);
        }
        hostPath = resolved;
      }
    }
    const m: Mount = { containerPath: vm.mountPath, hostPath, readonly: vol.readOnly || vm.readOnly === true };
    const p = vm.mountPropagation ? propagation[vm.mountPropagation] : undefined;
    if (p) m.propagation = p;
    mounts.push(m);
  }
  return mounts;
}
