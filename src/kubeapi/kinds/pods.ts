// The resource table's row for core/v1 Pods: storage over the backend's pods (with their lifecycle),
// the field selectors of pkg/registry/core/pod (PodToSelectableFields), the pod Table, the pod's
// strategic-merge keys, and its subresources: status, log (pod/rest/log.go), exec, attach, portforward.

import type { Pod } from '../../api/types.js';
import { podTable } from '../../printers/tables.js';
import type { LogOptions } from '../../runtime/streams.js';
import { pipeLog } from '../../http/log-stream.js';
import { ApiError, badRequest, sendJSON, successStatus } from '../../http/status.js';
import { readJSONBody } from '../../http/body.js';
import type { DeleteOptions, KubeBackend, Storage } from '../backend.js';
import { admitEviction } from '../eviction.js';
import { mergeSchema } from '../patch.js';
import { boolParam, intParam } from '../query.js';
import { resource, type ConnectRequest, type ConnectSubresource } from '../resource-def.js';

/** The Pod's patchMergeKeys (k8s.io/api/core/v1 types.go). */
export const podMergeKeys: Record<string, string> = {
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.ephemeralContainers': 'name',
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'spec.hostAliases': 'ip',
  'spec.readinessGates': 'conditionType',
  'spec.resourceClaims': 'name',
  'spec.topologySpreadConstraints': 'topologyKey',
  'status.conditions': 'type',
  'status.podIPs': 'ip',
};
for (const c of ['containers', 'initContainers', 'ephemeralContainers']) {
  podMergeKeys[`spec.${c}[].env`] = 'name';
  podMergeKeys[`spec.${c}[].ports`] = 'containerPort';
  podMergeKeys[`spec.${c}[].volumeMounts`] = 'mountPath';
  podMergeKeys[`spec.${c}[].volumeDevices`] = 'devicePath';
  podMergeKeys[`spec.${c}[].resizePolicy`] = 'resourceName';
}

/** The strategic-merge schema of a Pod (also what a pod template's spec merges by). */
export const podMergeSchema = mergeSchema(podMergeKeys);

function podStorage(b: KubeBackend): Storage<Pod> {
  return {
    list: () => b.listPods(),
    get: (ns, name) => b.getPod(ns, name),
    create: (pod, opts) => b.createPod(pod, opts),
    update: (pod, opts) => b.updatePod(pod, opts),
    delete: (ns, name, opts) => b.deletePod(ns, name, opts),
    watch: (rv, on) => b.watchPods(rv, on),
  };
}

/** GET pods/log: PodLogOptions checked as the API server checks them, then the container's log streamed. */
/**
 * pods/eviction (pkg/registry/core/pod/storage/eviction.go): a policy/v1 Eviction the pod's
 * PodDisruptionBudget allows (eviction.ts) deletes the pod gracefully with its deleteOptions and
 * answers 201 Success; one the budget forbids is answered 429 TooManyRequests.
 */
async function evictPod({ req, res, namespace, name, object: pod }: ConnectRequest<Pod>, backend: KubeBackend): Promise<void> {
  const body = (await readJSONBody(req)) as { kind?: string; metadata?: { name?: string }; deleteOptions?: DeleteOptions } | null;
  if (!body || typeof body !== 'object' || (body.kind !== undefined && body.kind !== 'Eviction'))
    throw badRequest('the body of the request was not an Eviction');
  if (body.metadata?.name && body.metadata.name !== name) throw badRequest(`name in URL does not match name in Eviction object`);
  const d = body.deleteOptions ?? {};
  await admitEviction(backend, pod, { dryRun: !!d.dryRun, nowMs: Date.now() });
  await (backend.evictPod ?? backend.deletePod).call(backend, namespace, name, {
    ...(d.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: d.gracePeriodSeconds } : {}),
    ...(d.preconditions ? { preconditions: d.preconditions } : {}),
    ...(d.dryRun ? { dryRun: true } : {}),
  });
  sendJSON(res, 201, { ...successStatus({}), code: 201 });
}

async function podLog({ req, res, query: q, namespace, name, object: pod }: ConnectRequest<Pod>, backend: KubeBackend): Promise<void> {
  const names = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.name);
  let container = q.get('container') ?? '';
  if (!container) {
    const main = pod.spec?.containers ?? [];
    if (main.length !== 1) {
      throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${main.map((c) => c.name).join(' ')}]`);
    }
    container = main[0]!.name;
  } else if (!names.includes(container)) {
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  }
  const lo: LogOptions = { container, follow: boolParam(q, 'follow'), previous: boolParam(q, 'previous'), timestamps: boolParam(q, 'timestamps') };
  const tail = intParam(q, 'tailLines');
  if (tail !== undefined) lo.tailLines = tail;
  const since = intParam(q, 'sinceSeconds');
  if (since !== undefined) {
    if (since < 1) throw new ApiError(422, 'Invalid', `PodLogOptions "${name}" is invalid: sinceSeconds: Invalid value: ${since}: must be greater than 0`);
    lo.sinceSeconds = since;
  }
  const sinceTime = q.get('sinceTime');
  if (sinceTime) {
    if (Number.isNaN(Date.parse(sinceTime))) throw badRequest(`sinceTime: invalid time "${sinceTime}"`);
    lo.sinceTime = sinceTime;
  }
  const limit = intParam(q, 'limitBytes');
  if (limit !== undefined) lo.limitBytes = limit;
  pipeLog(req, res, await backend.podLog(namespace, name, lo));
}

/** exec, attach and portforward are served on upgraded connections (streaming/upgrade.ts); a plain request is refused. */
function upgradeOnly(kind: string): ConnectSubresource<Pod> {
  return {
    kind,
    verbs: ['create', 'get'],
    serve: () => {
      throw badRequest('Upgrade request required');
    },
  };
}

export const pods = resource<Pod>({
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  singular: 'pod',
  shortNames: ['po'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: podStorage,
  fieldSelectors: {
    'spec.nodeName': (p) => p.spec?.nodeName ?? '',
    'spec.restartPolicy': (p) => p.spec?.restartPolicy ?? '',
    'spec.schedulerName': (p) => p.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (p) => p.spec?.serviceAccountName ?? '',
    'status.phase': (p) => p.status?.phase ?? '',
    'status.podIP': (p) => p.status?.podIP ?? '',
    'status.nominatedNodeName': (p) => p.status?.nominatedNodeName ?? '',
  },
  table: podTable,
  mergeSchema: podMergeSchema,
  returnDeletedObject: true,
  status: ['get'],
  connect: {
    log: { kind: 'Pod', verbs: ['get'], serve: podLog },
    exec: upgradeOnly('PodExecOptions'),
    attach: upgradeOnly('PodAttachOptions'),
    portforward: upgradeOnly('PodPortForwardOptions'),
    eviction: { kind: 'Eviction', verbs: ['create'], groupVersion: { group: 'policy', version: 'v1' }, serve: evictPod },
  },
});
