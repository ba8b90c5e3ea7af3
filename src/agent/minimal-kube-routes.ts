// The few Kubernetes REST routes podvisor's own commands use (create, list, get, replace and delete
// pods, and pods/log), served over KubeBackend. The full API layer (src/kubeapi/) supersedes them by
// mounting before them on the same router.

import type { Pod } from '../api/types.js';
import type { KubeBackend } from '../kubeapi/backend.js';
import { readJSONBody } from '../server/body.js';
import { parseLogQuery, pipeLog } from '../server/kubelet-routes.js';
import { checkPathName } from '../server/names.js';
import type { Router } from '../server/router.js';
import { HttpError, sendJSON } from '../server/status.js';
import { defaultContainerName } from './pod-streams.js';

function podList(items: Pod[], resourceVersion: string) {
  return { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion }, items };
}

export function registerMinimalKubeRoutes(router: Router, backend: KubeBackend): void {
  router.route('GET', '/api/v1/pods', (_req, res) => {
    const l = backend.listPods();
    sendJSON(res, 200, podList(l.items, l.resourceVersion));
  });
  router.route(['GET', 'POST'], '/api/v1/namespaces/:namespace/pods', async (req, res, p, url) => {
    const ns = checkPathName('namespace', p.namespace!);
    if (req.method === 'GET') {
      const l = backend.listPods();
      sendJSON(res, 200, podList(l.items.filter((x) => x.metadata?.namespace === ns), l.resourceVersion));
      return;
    }
    const body = (await readJSONBody(req)) as Pod;
    const meta = (body && typeof body === 'object' ? ((body.metadata ??= {}) as { namespace?: string }) : {});
    if (meta.namespace && meta.namespace !== ns) {
      throw new HttpError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = ns;
    const dryRun = url.searchParams.get('dryRun') === 'All';
    sendJSON(res, 201, await backend.createPod(body, { dryRun }));
  });
  router.route(['GET', 'PUT', 'DELETE'], '/api/v1/namespaces/:namespace/pods/:name', async (req, res, p, url) => {
    const ns = checkPathName('namespace', p.namespace!);
    const name = checkPathName('pod', p.name!);
    if (req.method === 'GET') {
      const pod = backend.getPod(ns, name);
      if (!pod) throw new HttpError(404, 'NotFound', `pods ${JSON.stringify(name)} not found`, { name, kind: 'pods' });
      sendJSON(res, 200, pod);
      return;
    }
    if (req.method === 'PUT') {
      const body = (await readJSONBody(req)) as Pod;
      const meta = (body && typeof body === 'object' ? ((body.metadata ??= {}) as { namespace?: string; name?: string }) : {});
      if ((meta.namespace && meta.namespace !== ns) || (meta.name && meta.name !== name)) {
        throw new HttpError(400, 'BadRequest', 'the name or namespace of the provided object does not match the request');
      }
      Object.assign(meta, { namespace: ns, name });
      sendJSON(res, 200, await backend.updatePod(body));
      return;
    }
    const graceRaw = url.searchParams.get('gracePeriodSeconds');
    let gracePeriodSeconds: number | undefined;
    if (graceRaw !== null) {
      if (!/^-?[0-9]+$/.test(graceRaw)) throw new HttpError(400, 'BadRequest', `invalid gracePeriodSeconds ${JSON.stringify(graceRaw)}`);
      gracePeriodSeconds = Math.max(0, Number(graceRaw));
    }
    const dryRun = url.searchParams.get('dryRun') === 'All';
    sendJSON(res, 200, await backend.deletePod(ns, name, { ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}), dryRun }));
  });
  router.route('GET', '/api/v1/namespaces/:namespace/pods/:name/log', async (req, res, p, url) => {
    const ns = checkPathName('namespace', p.namespace!);
    const name = checkPathName('pod', p.name!);
    const pod = backend.getPod(ns, name);
    if (!pod) throw new HttpError(404, 'NotFound', `pods ${JSON.stringify(name)} not found`, { name, kind: 'pods' });
    const given = url.searchParams.get('container');
    const container = given ? checkPathName('container', given) : defaultContainerName(pod);
    const q = parseLogQuery(url.searchParams);
    pipeLog(req, res, await backend.podLog(ns, name, { container, ...q }));
  });
}
