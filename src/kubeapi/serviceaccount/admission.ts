// The ServiceAccount admission plugin for a created pod (plugin/pkg/admission/serviceaccount): the
// pod runs as `default` unless it names an account; the account must exist (403 in the API server's
// words otherwise); the account's imagePullSecrets are the pod's when it has none; and unless the pod
// or its account says automountServiceAccountToken: false, every init, regular and ephemeral container
// that mounts nothing at /var/run/secrets/kubernetes.io/serviceaccount mounts there, read-only, the
// projected volume `kube-api-access-<5 random>`: a bound token (path token, 3607 s, which the kubelet
// requests and refreshes), the namespace's kube-root-ca.crt (ca.crt) and the pod's namespace. On a
// runtime that cannot mount volumes into containers (host processes) the account is checked and
// named, and the volume is left out, which the caller's warning says.

import { randomInt } from 'node:crypto';
import type { Pod } from '../../api/types.js';
import { defaultServiceAccountName, type ServiceAccount } from '../../api/service-account.js';
import { forbiddenObject } from '../../http/status.js';

export const tokenMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
export const tokenVolumePrefix = 'kube-api-access-';
/** WarnOnlyBoundTokenExpirationSeconds: the token's lifetime the admission asks for. */
export const tokenVolumeExpirationSeconds = 3607;
export const rootCAConfigMap = 'kube-root-ca.crt';

/** names.SimpleNameGenerator's alphabet (no vowels, no look-alikes). */
const alphabet = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * getServiceAccount: the account, looked up again for `default` up to 10 times 100–200 ms apart (the
 * ServiceAccount controller makes it just after its namespace), once for any other name.
 */
export async function lookupServiceAccount(
  get: (namespace: string, name: string) => ServiceAccount | undefined,
  namespace: string,
  name: string,
  sleep: (ms: number) => Promise<void>,
): Promise<ServiceAccount | undefined> {
  const attempts = name === defaultServiceAccountName ? 10 : 1;
  const interval = 100 + randomInt(100);
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await sleep(interval);
    const sa = get(namespace, name);
    if (sa) return sa;
  }
  return undefined;
}

export interface ServiceAccountAdmission {
  /** The account of a namespace (found by lookupServiceAccount), undefined when there is none. */
  serviceAccount(namespace: string, name: string): ServiceAccount | undefined;
  /** Whether the runtime mounts volumes into containers: without, the token volume is not added. */
  mountsVolumes: boolean;
  /** Picks an index below n (the volume name's random suffix); crypto's randomInt by default. */
  randomIndex?(n: number): number;
}

export type AdmissionOutcome = 'mounted' | 'not-mounted' | 'automount-off';

/** The projected volume the plugin adds (createVolume with BoundServiceAccountTokenVolume). */
export function tokenVolume(name: string) {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: tokenVolumeExpirationSeconds } },
        { configMap: { name: rootCAConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 0o644,
    },
  };
}

/** Admits the pod in place; throws the API server's 403 when its account does not exist. */
export function admitServiceAccount(pod: Pod, a: ServiceAccountAdmission): AdmissionOutcome {
  const spec = pod.spec!;
  const ns = pod.metadata?.namespace || 'default';
  const name = (spec.serviceAccountName ||= spec.serviceAccount || defaultServiceAccountName);
  spec.serviceAccount = name;
  const sa = a.serviceAccount(ns, name);
  if (!sa) {
    throw forbiddenObject(
      'pods',
      '',
      pod.metadata?.name ?? '',
      `error looking up service account ${ns}/${name}: serviceaccount ${JSON.stringify(name)} not found`,
    );
  }
  if (!spec.imagePullSecrets?.length && sa.imagePullSecrets?.length) spec.imagePullSecrets = sa.imagePullSecrets.map((s) => ({ ...s }));
  const automount = spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
  if (!automount) return 'automount-off';
  if (!a.mountsVolumes) return 'not-mounted';
  const volumes = spec.volumes ?? [];
  let volumeName = volumes.find((v) => v.name.startsWith(tokenVolumePrefix))?.name;
  const hasVolume = volumeName !== undefined;
  if (!volumeName) {
    const pick = a.randomIndex ?? ((n: number) => randomInt(n));
    do {
      volumeName = tokenVolumePrefix + Array.from({ length: 5 }, () => alphabet[pick(alphabet.length)]).join('');
    } while (volumes.some((v) => v.name === volumeName));
  }
  let needed = false;
  const mount = { name: volumeName, readOnly: true, mountPath: tokenMountPath };
  const containers = [
    ...(spec.initContainers ?? []),
    ...spec.containers,
    ...((spec as { ephemeralContainers?: typeof spec.containers }).ephemeralContainers ?? []),
  ];
  for (const c of containers) {
    if ((c.volumeMounts ?? []).some((m) => m.mountPath === tokenMountPath)) continue;
    c.volumeMounts = [...(c.volumeMounts ?? []), { ...mount }];
    needed = true;
  }
  if (needed && !hasVolume) spec.volumes = [...volumes, tokenVolume(volumeName)];
  return 'mounted';
}
