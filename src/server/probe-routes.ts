// podvisor's own probe history route on the agent's server (socket, --port, the kubelet port of a
// cluster node), behind the same access rules as /containerLogs: GET
// /podvisor/v1/namespaces/{ns}/pods/{name}/probes, a ProbeHistory document or, with ?watch=1, one
// JSON line per result (those kept first, then each new one as it comes).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProbeHistoryEntry } from '../prober/history.js';
import type { Router } from '../http/router.js';
import { ApiError, notFound, sendJSON } from '../http/status.js';
import { checkPathName } from './names.js';

/** One pod's probe history as the route reads it. */
export interface PodProbeHistory {
  entries(): ProbeHistoryEntry[];
  /** Calls listener with each new result; returns the unsubscribe. */
  watch(listener: (e: ProbeHistoryEntry) => void): () => void;
}

/** What the route reads: a pod's history by namespace and name, undefined when the node runs no such pod. */
export interface ProbeHistoryView {
  probeHistory(namespace: string, name: string): PodProbeHistory | undefined;
}

/** The document of the route (oldest result first). */
export interface ProbeHistoryDocument {
  kind: 'ProbeHistory';
  items: ProbeHistoryEntry[];
}

export const probeHistoryPath = (namespace: string, name: string) =>
  `/podvisor/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/probes`;

function watchParam(v: string | null): boolean {
  if (v === null || v === '0' || v === 'false') return false;
  if (v === '' || v === '1' || v === 'true') return true;
  throw new ApiError(400, 'BadRequest', `invalid boolean value ${JSON.stringify(v)} for watch`);
}

function streamLines(req: IncomingMessage, res: ServerResponse, history: PodProbeHistory): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' });
  for (const e of history.entries()) res.write(`${JSON.stringify(e)}\n`);
  const stop = history.watch((e) => res.write(`${JSON.stringify(e)}\n`));
  req.on('close', stop);
  res.on('close', stop);
}

export function registerProbeRoutes(router: Router, view: ProbeHistoryView): void {
  router.route('GET', '/podvisor/v1/namespaces/:namespace/pods/:pod/probes', (req, res, p, url) => {
    const ns = checkPathName('namespace', p.namespace!);
    const name = checkPathName('pod', p.pod!);
    const watch = watchParam(url.searchParams.get('watch'));
    const history = view.probeHistory(ns, name);
    if (!history) throw notFound('pods', name);
    if (watch) {
      streamLines(req, res, history);
      return;
    }
    const doc: ProbeHistoryDocument = { kind: 'ProbeHistory', items: history.entries() };
    sendJSON(res, 200, doc);
  });
}
