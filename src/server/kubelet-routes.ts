// The kubelet's own HTTP API on the agent server: /healthz, /pods, /runningpods/, /metrics (and
// /metrics/probes, /metrics/resource), /stats/summary, /containerLogs/{ns}/{pod}/{container},
// /configz — the shapes the kubelet serves, over whatever the node view provides.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Pod } from '../api/types.js';
import type { LogOptions } from '../runtime/streams.js';
import { checkPathName } from './names.js';
import type { Router } from '../http/router.js';
import { ApiError, sendJSON, sendText } from '../http/status.js';
import { pipeLog } from '../http/log-stream.js';
import { registerProbeRoutes, type ProbeHistoryView } from './probe-routes.js';

/** PodLogOptions as the kubelet reads them from a /containerLogs query (the container is in the path). */
export type ContainerLogQuery = Omit<LogOptions, 'container'>;

/** What the kubelet routes (and podvisor's probe history beside them) read; the agent provides it. */
export interface KubeletView extends ProbeHistoryView {
  readonly nodeName: string;
  /** The pods the node runs (desired pods with their status), as /pods lists them. */
  pods(): Pod[];
  /** Pods as the runtime sees them (names, UIDs, containers), for /runningpods/. */
  runningPods(): Promise<Pod[]>;
  /** False while the sync loop is stuck (/healthz/syncloop). */
  syncLoopHealthy(): boolean;
  /** Prometheus text of /metrics, /metrics/probes and /metrics/resource. */
  metrics(which: 'agent' | 'probes' | 'resource'): Promise<{ contentType: string; text: string }>;
  statsSummary(onlyCpuAndMemory: boolean): Promise<unknown>;
  containerLog(namespace: string, pod: string, container: string, q: ContainerLogQuery): Promise<Readable>;
  configz(): unknown;
}

function bool(v: string | null): boolean | undefined {
  if (v === null) return undefined;
  if (v === '' || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ApiError(400, 'BadRequest', `invalid boolean value ${JSON.stringify(v)}`);
}

function int(name: string, v: string | null, min: number): number | undefined {
  if (v === null) return undefined;
  if (!/^-?[0-9]+$/.test(v)) throw new ApiError(400, 'BadRequest', `${name}: Invalid value: ${JSON.stringify(v)}: must be an integer`);
  const n = Number(v);
  if (n < min)
    throw new ApiError(
      422,
      'Invalid',
      `PodLogOptions "" is invalid: ${name}: Invalid value: ${n}: must be greater than ${min === 0 ? 'or equal to 0' : min - 1}`,
    );
  return n;
}

/** The query of /containerLogs (and the API's pods/log), checked as the API server validates PodLogOptions. */
export function parseLogQuery(params: URLSearchParams): ContainerLogQuery {
  const q: ContainerLogQuery = {};
  const follow = bool(params.get('follow'));
  if (follow !== undefined) q.follow = follow;
  const previous = bool(params.get('previous'));
  if (previous !== undefined) q.previous = previous;
  const timestamps = bool(params.get('timestamps'));
  if (timestamps !== undefined) q.timestamps = timestamps;
  // The kubelet also takes the legacy `tail` (`tail=all` for everything).
  const legacyTail = params.get('tail');
  const tail = int('tailLines', params.get('tailLines') ?? (legacyTail === 'all' ? null : legacyTail), 0);
  if (tail !== undefined) q.tailLines = tail;
  const sinceSeconds = int('sinceSeconds', params.get('sinceSeconds'), 1);
  if (sinceSeconds !== undefined) q.sinceSeconds = sinceSeconds;
  const sinceTime = params.get('sinceTime');
  if (sinceTime !== null) {
    if (Number.isNaN(Date.parse(sinceTime))) throw new ApiError(400, 'BadRequest', `sinceTime: Invalid value: ${JSON.stringify(sinceTime)}: must be RFC 3339`);
    q.sinceTime = sinceTime;
  }
  if (q.sinceTime !== undefined && q.sinceSeconds !== undefined) {
    throw new ApiError(422, 'Invalid', 'PodLogOptions "" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified');
  }
  const limitBytes = int('limitBytes', params.get('limitBytes'), 1);
  if (limitBytes !== undefined) q.limitBytes = limitBytes;
  return q;
}

export function registerKubeletRoutes(router: Router, view: KubeletView): void {
  const ok = (_req: IncomingMessage, res: ServerResponse) => sendText(res, 200, 'ok');
  router.route(['GET', 'HEAD'], '/healthz', ok);
  router.route(['GET', 'HEAD'], '/healthz/ping', ok);
  router.route(['GET', 'HEAD'], '/healthz/syncloop', (_req, res) => {
    if (view.syncLoopHealthy()) sendText(res, 200, 'ok');
    else sendText(res, 500, '[-]syncloop failed: reason withheld\nhealthz check failed\n');
  });
  router.route('GET', '/pods', (_req, res) => {
    sendJSON(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: view.pods() });
  });
  router.route('GET', '/runningpods/', async (_req, res) => {
    sendJSON(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: await view.runningPods() });
  });
  for (const [path, which] of [
    ['/metrics', 'agent'],
    ['/metrics/probes', 'probes'],
    ['/metrics/resource', 'resource'],
  ] as const) {
    router.route('GET', path, async (_req, res) => {
      const m = await view.metrics(which);
      sendText(res, 200, m.text, m.contentType);
    });
  }
  router.route(['GET', 'POST'], '/stats/summary', async (_req, res, _p, url) => {
    sendJSON(res, 200, await view.statsSummary(url.searchParams.get('only_cpu_and_memory') === 'true'));
  });
  router.route('GET', '/containerLogs/:namespace/:pod/:container', async (req, res, p, url) => {
    const ns = checkPathName('namespace', p.namespace!);
    const pod = checkPathName('pod', p.pod!);
    const container = checkPathName('container', p.container!);
    const q = parseLogQuery(url.searchParams);
    pipeLog(req, res, await view.containerLog(ns, pod, container, q));
  });
  router.route('GET', '/configz', (_req, res) => sendJSON(res, 200, { kubeletconfig: view.configz() }));
  registerProbeRoutes(router, view);
}
