// The resource table's row for metrics.k8s.io/v1beta1 PodMetrics (`kubectl top pod`): read-only,
// one per pod the backend has usage for, as metrics-server serves them (nanocores and KiB), with its
// Table (NAME, cpu, memory, WINDOW).

import type { Pod } from '../../api/types.js';
import { podMetricsTable } from '../../printers/config-tables.js';
import type { KubeBackend, KubeObject, Storage } from '../backend.js';
import { resource, type ApiContext } from '../resource-def.js';

export const metricsGroup = 'metrics.k8s.io';

/** Quantities as metrics-server writes them: nanocores and KiB. */
function cpuQuantity(cores: number): string {
  return `${Math.max(0, Math.round(cores * 1e9))}n`;
}
function memoryQuantity(bytes: number): string {
  return `${Math.max(0, Math.round(bytes / 1024))}Ki`;
}

function podMetrics(b: KubeBackend, ctx: ApiContext, p: Pod): KubeObject | undefined {
  const ns = p.metadata?.namespace ?? 'default';
  const name = p.metadata?.name ?? '';
  const m = b.podMetrics(ns, name);
  if (!m) return undefined;
  return {
    kind: 'PodMetrics',
    apiVersion: `${metricsGroup}/v1beta1`,
    metadata: { name, namespace: ns, creationTimestamp: new Date(ctx.now()).toISOString().replace(/\.\d+Z$/, 'Z'), labels: p.metadata?.labels ?? {} },
    timestamp: m.timestamp,
    window: m.window,
    containers: m.containers.map((c) => ({ name: c.name, usage: { cpu: cpuQuantity(c.cpuCores), memory: memoryQuantity(c.memoryBytes) } })),
  } as KubeObject;
}

function podMetricsStorage(b: KubeBackend, ctx: ApiContext): Storage {
  return {
    list: () => ({
      items: b
        .listPods()
        .items.map((p) => podMetrics(b, ctx, p))
        .filter((m) => m !== undefined),
    }),
    get: (ns, name) => {
      const p = b.getPod(ns, name);
      return p && podMetrics(b, ctx, p);
    },
  };
}

export const podMetricsResource = resource({
  group: metricsGroup,
  version: 'v1beta1',
  kind: 'PodMetrics',
  resource: 'pods',
  singular: '',
  namespaced: true,
  verbs: ['get', 'list'],
  storage: podMetricsStorage,
  table: podMetricsTable,
});
