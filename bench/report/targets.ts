// The targets, in one place so the table, the JSON and docs/performance.md agree on them.

import type { Target } from './figures.js';

export const targets = {
  probeCpuRatio: { text: '≤ 1.5× floor', on: 'ratio', op: '<=', value: 1.5, definedAt: 1000 },
  probeLatenessP99: { text: '≤ 20 ms', on: 'agent', op: '<=', value: 20, definedAt: 1000 },
  probeRss: { text: '≤ 200 MB', on: 'agent', op: '<=', value: 200, definedAt: 1000 },
  probeErrors: { text: '= 0', on: 'agent', op: '=', value: 0 },
  historyCpuRatio: { text: '≤ 1.05× without history', on: 'ratio', op: '<=', value: 1.05, definedAt: 500 },
  execCpuRatio: { text: '≤ 1.3× floor', on: 'ratio', op: '<=', value: 1.3 },
  startOverheadP50: { text: '≤ 5 ms', on: 'agent', op: '<=', value: 5, definedAt: 100 },
  detectionExcessP99: { text: '≤ 50 ms', on: 'agent', op: '<=', value: 50 },
  idleCpu: { text: '< 1 % of a core', on: 'agent', op: '<', value: 1, definedAt: 100 },
  idleRss: { text: '≤ 80 MB', on: 'agent', op: '<=', value: 80, definedAt: 100 },
} satisfies Record<string, Target>;
