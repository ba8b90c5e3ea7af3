// The agent's Prometheus metrics with the kubelet's names (kubelet_running_pods,
// kubelet_running_containers, kubelet_pod_start_duration_seconds, …), and the text of
// /metrics/resource and the /stats/summary document from a usage sample.

import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Pod } from '../api/types.js';
import type { UsageSample } from './usage.js';

export interface AgentMetrics {
  registry: Registry;
  podStartDuration: Histogram;
}

/**
 * A registry that registers prom-client's default process metrics on its first scrape: until then
 * the agent runs without their event-loop delay monitor and GC observer (process_* figures are read
 * at collection anyway).
 */
class DefaultsOnScrape extends Registry {
  private defaults = false;

  override async metrics(): Promise<string> {
    if (!this.defaults) {
      this.defaults = true;
      collectDefaultMetrics({ register: this });
    }
    return super.metrics();
  }
}

/** kubelet_running_pods: the pods with a running sandbox, i.e. those Running or still Pending. */
export function runningPodCount(pods: readonly Pod[]): number {
  return pods.filter((p) => p.status?.phase === 'Running' || p.status?.phase === 'Pending').length;
}

export function createAgentMetrics(opts: {
  nodeName: string;
  /** The pods the agent runs, with their status. */
  pods: () => readonly Pod[];
  containersByState: () => Promise<Record<string, number>>;
}): AgentMetrics {
  const registry = new DefaultsOnScrape();
  new Gauge({
    name: 'kubelet_node_name',
    help: "[ALPHA] The node's name. The count is always 1.",
    labelNames: ['node'],
    registers: [registry],
    collect() {
      this.set({ node: opts.nodeName }, 1);
    },
  });
  new Gauge({
    name: 'kubelet_running_pods',
    help: '[ALPHA] Number of pods that have a running pod sandbox',
    registers: [registry],
    collect() {
      this.set(runningPodCount(opts.pods()));
    },
  });
  new Gauge({
    name: 'kubelet_running_containers',
    help: '[ALPHA] Number of containers currently running',
    labelNames: ['container_state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [state, n] of Object.entries(await opts.containersByState())) this.set({ container_state: state }, n);
    },
  });
  const podStartDuration = new Histogram({
    name: 'kubelet_pod_start_duration_seconds',
    help: '[ALPHA] Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
    buckets: [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600],
    registers: [registry],
  });
  return { registry, podStartDuration };
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** /metrics/resource as the kubelet's resource metrics collector writes it (values with timestamps). */
export function resourceMetricsText(s: UsageSample): string {
  const ts = String(s.time);
  const out: string[] = [];
  const family = (name: string, type: string, help: string, lines: string[]) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
  };
  const cl = (p: { namespace: string; name: string }, c: { name: string }) =>
    `{container="${esc(c.name)}",namespace="${esc(p.namespace)}",pod="${esc(p.name)}"}`;
  const pl = (p: { namespace: string; name: string }) => `{namespace="${esc(p.namespace)}",pod="${esc(p.name)}"}`;
  family(
    'container_cpu_usage_seconds_total',
    'counter',
    '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
    s.pods.flatMap((p) => p.containers.map((c) => `container_cpu_usage_seconds_total${cl(p, c)} ${c.cpuNanos / 1e9} ${ts}`)),
  );
  family(
    'container_memory_working_set_bytes',
    'gauge',
    '[STABLE] Current working set of the container in bytes',
    s.pods.flatMap((p) => p.containers.map((c) => `container_memory_working_set_bytes${cl(p, c)} ${c.memoryBytes} ${ts}`)),
  );
  family(
    'container_start_time_seconds',
    'gauge',
    '[STABLE] Start time of the container since unix epoch in seconds',
    s.pods.flatMap((p) => p.containers.map((c) => `container_start_time_seconds${cl(p, c)} ${c.startedAt / 1000} ${ts}`)),
  );
  if (s.node) {
    family('node_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the node in core-seconds', [
      `node_cpu_usage_seconds_total ${s.node.cpuNanos / 1e9} ${ts}`,
    ]);
    family('node_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the node in bytes', [
      `node_memory_working_set_bytes ${s.node.memoryBytes} ${ts}`,
    ]);
  }
  family(
    'pod_cpu_usage_seconds_total',
    'counter',
    '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
    s.pods.map((p) => `pod_cpu_usage_seconds_total${pl(p)} ${p.containers.reduce((a, c) => a + c.cpuNanos, 0) / 1e9} ${ts}`),
  );
  family(
    'pod_memory_working_set_bytes',
    'gauge',
    '[STABLE] Current working set of the pod in bytes',
    s.pods.map((p) => `pod_memory_working_set_bytes${pl(p)} ${p.containers.reduce((a, c) => a + c.memoryBytes, 0)} ${ts}`),
  );
  family('scrape_error', 'gauge', '[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise', ['scrape_error 0']);
  return out.join('\n') + '\n';
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** stats/v1alpha1 Summary (CPU and memory; the process runtime measures nothing else). */
export function statsSummary(s: UsageSample, nodeName: string, nodeStart: number): unknown {
  const time = rfc3339(s.time);
  const cpu = (nanos: number, cores?: number) => ({
    time,
    ...(cores !== undefined ? { usageNanoCores: Math.round(cores * 1e9) } : {}),
    usageCoreNanoSeconds: Math.round(nanos),
  });
  const mem = (bytes: number) => ({ time, usageBytes: bytes, workingSetBytes: bytes, rssBytes: bytes });
  return {
    node: {
      nodeName,
      startTime: rfc3339(nodeStart),
      ...(s.node ? { cpu: cpu(s.node.cpuNanos, s.node.cpuCores), memory: { time, workingSetBytes: s.node.memoryBytes, usageBytes: s.node.memoryBytes } } : {}),
    },
    pods: s.pods.map((p) => {
      const started = Math.min(...p.containers.map((c) => c.startedAt));
      const sumCores = p.containers.every((c) => c.cpuCores !== undefined) ? p.containers.reduce((a, c) => a + (c.cpuCores ?? 0), 0) : undefined;
      return {
        podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
        startTime: rfc3339(started),
        containers: p.containers.map((c) => ({ name: c.name, startTime: rfc3339(c.startedAt), cpu: cpu(c.cpuNanos, c.cpuCores), memory: mem(c.memoryBytes) })),
        cpu: cpu(
          p.containers.reduce((a, c) => a + c.cpuNanos, 0),
          sumCores,
        ),
        memory: mem(p.containers.reduce((a, c) => a + c.memoryBytes, 0)),
      };
    }),
  };
}
