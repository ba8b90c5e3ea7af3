// scheduler: the one-node scheduler's cost per pod with N pods bound to the node (each with CPU and
// memory requests, a containerPort, labels): one pass of the default filters (NodeResourcesFit,
// NodePorts on a shared host network, PodTopologySpread, InterPodAffinity with terms) for a pod that
// fits, next to the same pass on an empty node, measured in the same run: the floor. The target is
// 10 % of a pod's start (taken as 100 ms on the process runtime): 10 ms at 500 pods. Then, on a real
// agent (scheduler-freed.ts), the time from a freed resource to the pending pod's start, split into
// the scheduler's wait (its back-off included) and the start, with the back-off running and expired.

import type { Node, Pod } from '../../src/api/types.js';
import { defaultFilters } from '../../src/scheduler/plugins/registry.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import { measureFreedResource, type FreedTrial } from './scheduler-freed.js';
import type { Scenario } from './types.js';

const FREED_TRIALS = 3;

const node: Node = {
  metadata: { name: 'bench', labels: { 'kubernetes.io/hostname': 'bench' } },
  spec: {},
  status: { allocatable: { cpu: '1000', memory: '4000Gi', pods: '10000' } },
};

function boundPods(n: number): Pod[] {
  return Array.from({ length: n }, (_, i) => ({
    metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, labels: { app: `a${i % 10}` } },
    spec: {
      nodeName: 'bench',
      containers: [{ name: 'c', ports: [{ containerPort: 10_000 + i }], resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
    },
    status: { phase: 'Running' },
  })) as Pod[];
}

const incoming: Pod = {
  metadata: { name: 'new', namespace: 'default', uid: 'new', labels: { app: 'a1' } },
  spec: {
    containers: [{ name: 'c', ports: [{ containerPort: 9999 }], resources: { requests: { cpu: '100m' } } }],
    affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', labelSelector: { matchLabels: { app: 'x' } } }] } },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'a1' } } },
    ],
  },
} as Pod;

/** Median ms of one filter pass over runs. */
function median(runs: number, pods: Pod[]): number {
  const filters = defaultFilters({ network: 'host', namespaceLabels: () => ({}) });
  const info = { node, pods };
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    for (const f of filters) if (f.filter(incoming, info)) throw new Error(`the bench pod does not fit: ${f.name}`);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
}

export const scheduler: Scenario = {
  name: 'scheduler',
  defaultSizes: [100, 500],
  sizeIsPods: false,
  async run(n, ctx): Promise<ScenarioResult> {
    const pods = boundPods(n);
    const runs = 200;
    ctx.log(`scheduler: ${n} bound pods, ${runs} filter passes`);
    median(20, pods);
    const floor = median(runs, []);
    const perPod = median(runs, pods);
    ctx.log(`scheduler: freed resource → pending pod Running on a real agent, ${FREED_TRIALS} trials per case`);
    const trials = await measureFreedResource(ctx, FREED_TRIALS);
    const pick = (running: boolean, key: keyof Omit<FreedTrial, 'backoffRunning'>) =>
      medianOf(trials.filter((t) => t.backoffRunning === running).map((t) => t[key]));
    return {
      scenario: 'scheduler',
      size: n,
      figures: [
        figure('filter_pass_ms', 'filters for one pod', 'ms', perPod, floor, { text: '≤ 10 ms at 500 pods', on: 'agent', op: '<=', value: 10, definedAt: 500 }),
        ...[true, false].flatMap((running) => {
          const k = running ? 'backoff_running' : 'backoff_expired';
          const l = running ? 'back-off running' : 'back-off expired';
          return [
            figure(`freed_to_running_${k}_ms`, `freed CPU → pending pod Running (${l})`, 'ms', pick(running, 'freedToRunningMs'), null),
            figure(`freed_schedule_${k}_ms`, `  of which the scheduler's wait (${l})`, 'ms', pick(running, 'scheduleMs'), pick(running, 'backoffLeftMs')),
            figure(`freed_start_${k}_ms`, `  of which bind → Running (${l})`, 'ms', pick(running, 'startMs'), null),
            figure(`freed_terminate_${k}_ms`, `holder's delete → its end (${l})`, 'ms', pick(running, 'terminateMs'), null),
          ];
        }),
      ],
      notes: [
        `size in bound pods; floor: the same filters on an empty node; median of ${runs} passes`,
        `freed CPU: a real \`podvisor agent --node-cpu 1\` (process runtime), a pod of 1 CPU deleted while one of 500m waits Unschedulable; medians of ${FREED_TRIALS} trials per case, independent of the size; the scheduler's wait has as floor the back-off left when the CPU was freed (last attempt + 1 s − the holder's end)`,
      ],
      raw: { freed: trials },
    };
  },
};
