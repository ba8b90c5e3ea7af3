// Applying loaded manifests to the agent as kubectl apply does — create, or replace where the API
// server's update rules allow — printing `kind/name created|configured|unchanged`. ConfigMaps and
// Secrets go first, so the pods' env and volume references resolve on the agent, then Services and
// workloads (`deployment.apps/web created`), then pods. Used by `podvisor apply`, `up -d` and the
// `run` and `up` of workloads.

import type { ConfigMap, Pod, Secret } from '../api/types.js';
import { canonicalJSON, configHashAnnotation, configSourceAnnotation } from '../api/defaults.js';
import type { CommandIO } from './args.js';
import { agentRequest, replyMessage, type AgentReply } from './agent-client.js';
import { apiPath, type CoreResource } from './kube-client.js';
import { qualifiedName, type ManifestObject } from '../config/object-kinds.js';
import { objectPath, type AppliedRef } from './object-paths.js';
import { waitPodsGone } from './pod-watch.js';
import { sleepLong } from '../util/timer.js';

export interface AppliedObject {
  resource: CoreResource;
  ns: string;
  name: string;
}

/** The pod as sent to the API: what the file loader derived for static pods taken off again. */
export function podForAPI(pod: Pod): Pod {
  const p = structuredClone(pod);
  const m = p.metadata as { uid?: string; annotations?: Record<string, string> };
  delete m.uid;
  if (m.annotations) {
    delete m.annotations[configHashAnnotation];
    delete m.annotations[configSourceAnnotation];
    if (Object.keys(m.annotations).length === 0) delete m.annotations;
  }
  return p;
}

/** The API's warnings of a reply on stderr, as kubectl prints them, with the object they are about (as validate names it). */
function printWarnings(r: AgentReply, shown: string, io: Pick<CommandIO, 'stderr'>): void {
  for (const w of r.warnings ?? []) io.stderr.write(`Warning: ${shown}: ${w}\n`);
}

function failure(r: AgentReply): string {
  const m = replyMessage(r);
  return r.status === 422 ? `The ${m.message}\n` : `Error from server (${m.reason}): ${m.message}\n`;
}

/** kubectl apply's patcher: how many times a conflicting patch is read again and sent again. */
const maxPatchRetry = 5;
/** kubectl apply's backOffPeriod, waited before each retry after the first. */
const backOffPeriodMs = 1_000;

/**
 * Reads the object at path and sends the update send makes at its resourceVersion; when that
 * conflicts (the object changed in between: a controller's write, another apply, an agent that
 * restarted and settles) reads it again and sends again, as kubectl apply does. current is the read
 * the reply answers; undefined when the read itself failed (reply is then the read's).
 */
async function updateLatest(
  root: string,
  path: string,
  send: (resourceVersion: string | undefined) => Promise<AgentReply>,
): Promise<{ current?: AgentReply; reply: AgentReply }> {
  for (let retry = 0; ; retry++) {
    const current = await agentRequest(root, 'GET', path);
    if (current.status !== 200) return { reply: current };
    const reply = await send(current.json<{ metadata?: { resourceVersion?: string } }>().metadata?.resourceVersion);
    if (reply.status !== 409 || retry >= maxPatchRetry) return { current, reply };
    if (retry >= 1) await sleepLong(backOffPeriodMs);
  }
}

const singular: Record<string, string> = { pods: 'pod', configmaps: 'configmap', secrets: 'secret' };

/**
 * Applies one object: POST, and on AlreadyExists a patch (a pod) or a PUT at the current
 * resourceVersion, again at the latest on a conflict. Returns the exit code it contributes (0, 1
 * server failure, 2 invalid).
 */
async function applyOne(
  root: string,
  resource: CoreResource,
  obj: { metadata?: { name?: string; namespace?: string } },
  io: Pick<CommandIO, 'stdout' | 'stderr'>,
  opts: ApplyOptions,
): Promise<number> {
  const ns = obj.metadata?.namespace ?? 'default';
  const name = obj.metadata?.name ?? '';
  const created = await agentRequest(root, 'POST', apiPath(resource, ns), obj);
  printWarnings(created, `${singular[resource]}/${name}`, io);
  if (created.status === 201) {
    io.stdout.write(`${singular[resource]}/${name} created\n`);
    return 0;
  }
  if (created.status !== 409) {
    io.stderr.write(failure(created));
    return created.status === 422 || created.status === 400 ? 2 : 1;
  }
  // A pod is patched (strategic merge, containers by name), as kubectl apply patches it: what the
  // server defaulted and the manifest leaves unset (an imagePullPolicy) stays as it is. ConfigMaps
  // and Secrets are replaced whole, so keys removed from the manifest go.
  const path = apiPath(resource, ns, name);
  const { current, reply: replaced } = await updateLatest(root, path, (rv) =>
    resource === 'pods'
      ? agentRequest(
          root,
          'PATCH',
          path,
          { ...obj, metadata: { ...obj.metadata, resourceVersion: rv } },
          { 'Content-Type': 'application/strategic-merge-patch+json' },
        )
      : agentRequest(root, 'PUT', path, { ...obj, metadata: { ...obj.metadata, resourceVersion: rv } }),
  );
  printWarnings(replaced, `${singular[resource]}/${name}`, io);
  if (!current) {
    io.stderr.write(failure(replaced));
    return 1;
  }
  const cur = current.json<{ metadata?: { resourceVersion?: string }; spec?: unknown }>();
  if (replaced.status === 422 && resource === 'pods') {
    if (opts.immutable === 'replace') return replacePod(root, ns, name, obj, io);
    io.stderr.write(failure(replaced));
    io.stderr.write(
      `hint: a pod that exists changes only its images, activeDeadlineSeconds and metadata; "podvisor up -d" replaces pods whose spec changed, as does "podvisor apply --force"\n`,
    );
    return 2;
  }
  if (replaced.status !== 200) {
    io.stderr.write(failure(replaced));
    return replaced.status === 422 ? 2 : 1;
  }
  const after = replaced.json<typeof cur>();
  const same = after.metadata?.resourceVersion === cur.metadata?.resourceVersion && canonicalJSON(after.spec) === canonicalJSON(cur.spec);
  io.stdout.write(`${singular[resource]}/${name} ${same ? 'unchanged' : 'configured'}\n`);
  return 0;
}

export interface ApplyOptions {
  /**
   * A pod change the API refuses (its spec is immutable): `fail` as kubectl apply, `replace` deletes
   * the pod gracefully and creates it anew, as `kubectl replace --force` and compose's recreate do.
   */
  immutable: 'fail' | 'replace';
  /**
   * A namespace the objects name that does not exist: `require` answers NotFound as kubectl apply
   * does; `create` makes it first (`namespace/NAME created`), as the compose-like `up` and `run` do.
   */
  namespaces?: 'require' | 'create';
}

/** Creates each namespace of names that the agent does not have yet; resolves to an exit code. */
async function createMissingNamespaces(root: string, names: Iterable<string>, io: Pick<CommandIO, 'stdout' | 'stderr'>): Promise<number> {
  for (const ns of new Set(names)) {
    const found = await agentRequest(root, 'GET', `/api/v1/namespaces/${encodeURIComponent(ns)}`);
    if (found.status === 200) continue;
    const made = await agentRequest(root, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    if (made.status === 201) io.stdout.write(`namespace/${ns} created\n`);
    else if (made.status !== 409) {
      io.stderr.write(failure(made));
      return made.status === 422 ? 2 : 1;
    }
  }
  return 0;
}

/** Deletes a pod gracefully, waits until it is gone, creates it from obj: `pod/NAME replaced`. */
async function replacePod(root: string, ns: string, name: string, obj: object, io: Pick<CommandIO, 'stdout' | 'stderr'>, timeoutMs = 300_000): Promise<number> {
  const deleted = await agentRequest(root, 'DELETE', apiPath('pods', ns, name));
  if (deleted.status !== 200 && deleted.status !== 404) {
    io.stderr.write(failure(deleted));
    return 1;
  }
  // The name is free once the pod is gone: seen by one list and a watch.
  const left = await waitPodsGone(root, [{ ns, name }], { timeoutMs });
  if (left.length > 0) {
    io.stderr.write(`error: pod/${name} still terminating after ${Math.round(timeoutMs / 1000)}s: not replaced\n`);
    return 1;
  }
  const created = await agentRequest(root, 'POST', apiPath('pods', ns), { ...obj, metadata: { ...(obj as Pod).metadata, resourceVersion: undefined } });
  if (created.status !== 201) {
    io.stderr.write(failure(created));
    return created.status === 422 ? 2 : 1;
  }
  io.stdout.write(`pod/${name} replaced\n`);
  return 0;
}

/**
 * Applies a Service or a workload as kubectl apply does: POST, and on AlreadyExists a strategic
 * merge patch of the manifest at the current resourceVersion, again at the latest on a conflict
 * (`configured`, or `unchanged` when the server kept the object as it was). Returns the exit code it
 * contributes and the name applied (the server's, for a manifest with generateName).
 */
async function applyManifestObject(root: string, obj: ManifestObject, io: Pick<CommandIO, 'stdout' | 'stderr'>): Promise<{ code: number; name: string }> {
  const ns = obj.metadata?.namespace ?? 'default';
  const name = obj.metadata?.name ?? '';
  const shown = qualifiedName(obj);
  const created = await agentRequest(root, 'POST', objectPath(obj.apiVersion, obj.kind, ns), obj);
  printWarnings(created, shown, io);
  if (created.status === 201) {
    // A name made from generateName is the server's.
    const made = obj.metadata?.name ? obj : { ...obj, metadata: created.json<ManifestObject>().metadata };
    io.stdout.write(`${qualifiedName(made)} created\n`);
    return { code: 0, name: made.metadata?.name ?? '' };
  }
  if (created.status !== 409) {
    io.stderr.write(failure(created));
    return { code: created.status === 422 || created.status === 400 ? 2 : 1, name };
  }
  const path = objectPath(obj.apiVersion, obj.kind, ns, name);
  const { current, reply: patched } = await updateLatest(root, path, (rv) =>
    agentRequest(
      root,
      'PATCH',
      path,
      { ...obj, metadata: { ...obj.metadata, resourceVersion: rv } },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    ),
  );
  printWarnings(patched, shown, io);
  if (!current) {
    io.stderr.write(failure(patched));
    return { code: 1, name };
  }
  const rv = current.json<{ metadata?: { resourceVersion?: string } }>().metadata?.resourceVersion;
  if (patched.status !== 200) {
    io.stderr.write(failure(patched));
    return { code: patched.status === 422 ? 2 : 1, name };
  }
  const same = patched.json<{ metadata?: { resourceVersion?: string } }>().metadata?.resourceVersion === rv;
  io.stdout.write(`${shown} ${same ? 'unchanged' : 'configured'}\n`);
  return { code: 0, name };
}

/** Applies ConfigMaps, Secrets, Services and workloads, then pods; resolves to the exit code and what was applied. */
export async function applyObjects(
  root: string,
  objs: { pods: Pod[]; podManifests?: Pod[]; configMaps?: ConfigMap[]; secrets?: Secret[]; objectManifests?: ManifestObject[] },
  io: Pick<CommandIO, 'stdout' | 'stderr'>,
  opts: ApplyOptions = { immutable: 'fail' },
): Promise<{ code: number; pods: AppliedObject[]; objects: AppliedRef[] }> {
  // Namespaces first (a file may create the namespace its other objects use, as with kubectl), then
  // Services, PriorityClasses and RuntimeClasses before the workloads, so the pods they make get the service links, their priority and their class.
  const rank = (o: ManifestObject) => (o.kind === 'Namespace' ? 0 : o.kind === 'Service' || o.kind === 'PriorityClass' || o.kind === 'RuntimeClass' ? 1 : 2);
  const manifests = [...(objs.objectManifests ?? [])].sort((a, b) => rank(a) - rank(b));
  const declared = new Set(manifests.filter((o) => o.kind === 'Namespace').map((o) => o.metadata?.name ?? ''));
  const objects: AppliedRef[] = [];
  let code = 0;
  const applyManifests = async (which: (o: ManifestObject) => boolean) => {
    for (const obj of manifests.filter(which)) {
      const { code: c, name } = await applyManifestObject(root, obj, io);
      if (c === 0) objects.push({ kind: obj.kind, ns: obj.metadata?.namespace ?? 'default', name, object: obj });
      code = Math.max(code, c);
    }
  };
  await applyManifests((o) => o.kind === 'Namespace');
  if (opts.namespaces === 'create') {
    const named = [...(objs.configMaps ?? []), ...(objs.secrets ?? []), ...manifests.filter((o) => o.kind !== 'Namespace'), ...objs.pods]
      .map((o) => o.metadata?.namespace ?? 'default')
      .filter((ns) => !declared.has(ns));
    const c = await createMissingNamespaces(root, named, io);
    if (c !== 0) return { code: c, pods: [], objects };
  }
  for (const cm of objs.configMaps ?? [])
    code = Math.max(code, await applyOne(root, 'configmaps', { apiVersion: 'v1', kind: 'ConfigMap', ...cm } as ConfigMap, io, opts));
  for (const s of objs.secrets ?? []) code = Math.max(code, await applyOne(root, 'secrets', { apiVersion: 'v1', kind: 'Secret', ...s } as Secret, io, opts));
  await applyManifests((o) => o.kind !== 'Namespace');
  const pods: AppliedObject[] = [];
  for (const [i, pod] of objs.pods.entries()) {
    // The pod as written (the server defaults it), in the namespace the loader gave it.
    const written = objs.podManifests?.[i];
    const body = written ? { ...written, metadata: { ...written.metadata, namespace: pod.metadata?.namespace ?? 'default' } } : podForAPI(pod);
    const c = await applyOne(root, 'pods', body, io, opts);
    if (c === 0) pods.push({ resource: 'pods', ns: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '' });
    code = Math.max(code, c);
  }
  return { code, pods, objects };
}
