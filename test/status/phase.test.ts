// getPhase (§9): every rule, with plain init containers, sidecars and regular containers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getPhase } from '../../src/status/phase.js';
import type { ContainerStatus } from '../../src/api/types.js';
import { container, pod, sidecar, st } from './fixtures.js';

interface Case {
  name: string;
  policy?: 'Always' | 'OnFailure' | 'Never';
  init?: ('init' | 'side')[];
  regular?: number;
  initStatuses?: ContainerStatus[];
  statuses: ContainerStatus[];
  terminal?: boolean;
  want: string;
}

const cases: Case[] = [
  // regular containers only
  { name: 'no statuses → Pending', statuses: [], want: 'Pending' },
  { name: 'all running → Running', regular: 2, statuses: [st.running('c0'), st.running('c1')], want: 'Running' },
  { name: 'one running, one unknown → Pending', regular: 2, statuses: [st.running('c0')], want: 'Pending' },
  { name: 'one running, one waiting (never ran) → Pending', regular: 2, statuses: [st.running('c0'), st.waiting('c1')], want: 'Pending' },
  { name: 'running + waiting with last termination → Running', regular: 2, statuses: [st.running('c0'), st.waiting('c1', 1)], want: 'Running' },
  { name: 'running + terminated → Running', regular: 2, statuses: [st.running('c0'), st.terminated('c1', 0)], want: 'Running' },
  { name: 'state with nothing set counts unknown → Pending', regular: 1, statuses: [st.empty('c0')], want: 'Pending' },
  { name: 'Always, all exited → Running (restarting)', policy: 'Always', statuses: [st.terminated('c0', 0)], want: 'Running' },
  { name: 'Always, exited, terminal → Succeeded', policy: 'Always', statuses: [st.terminated('c0', 0)], terminal: true, want: 'Succeeded' },
  { name: 'Always, failed, terminal → Failed', policy: 'Always', statuses: [st.terminated('c0', 137)], terminal: true, want: 'Failed' },
  { name: 'OnFailure, exit 0 → Succeeded', policy: 'OnFailure', statuses: [st.terminated('c0', 0)], want: 'Succeeded' },
  { name: 'OnFailure, exit 1 → Running (restarting)', policy: 'OnFailure', statuses: [st.terminated('c0', 1)], want: 'Running' },
  { name: 'OnFailure, waiting after exit 1 → Running', policy: 'OnFailure', statuses: [st.waiting('c0', 1)], want: 'Running' },
  { name: 'OnFailure, exit 1, terminal → Failed', policy: 'OnFailure', statuses: [st.terminated('c0', 1)], terminal: true, want: 'Failed' },
  { name: 'Never, exit 0 → Succeeded', policy: 'Never', statuses: [st.terminated('c0', 0)], want: 'Succeeded' },
  { name: 'Never, exit 0 and 1 → Failed', policy: 'Never', regular: 2, statuses: [st.terminated('c0', 0), st.terminated('c1', 1)], want: 'Failed' },
  { name: 'Never, one exited one unknown → Pending', policy: 'Never', regular: 2, statuses: [st.terminated('c0', 0)], want: 'Pending' },

  // plain init containers
  { name: 'init without status → Pending', init: ['init'], statuses: [], want: 'Pending' },
  { name: 'init running → Pending', init: ['init'], initStatuses: [st.running('i0')], statuses: [st.waiting('c0')], want: 'Pending' },
  { name: 'init waiting, never ran → Pending', init: ['init'], initStatuses: [st.waiting('i0')], statuses: [], want: 'Pending' },
  { name: 'init done, app running → Running', init: ['init'], initStatuses: [st.terminated('i0', 0)], statuses: [st.running('c0')], want: 'Running' },
  {
    name: 'init failed, Never → Failed',
    policy: 'Never',
    init: ['init'],
    initStatuses: [st.terminated('i0', 1)],
    statuses: [st.waiting('c0')],
    want: 'Failed',
  },
  {
    name: 'init failed (waiting, last exit 1), Never → Failed',
    policy: 'Never',
    init: ['init'],
    initStatuses: [st.waiting('i0', 1)],
    statuses: [],
    want: 'Failed',
  },
  {
    name: 'init failed, Always → Pending (retrying)',
    policy: 'Always',
    init: ['init'],
    initStatuses: [st.waiting('i0', 1)],
    statuses: [st.waiting('c0')],
    want: 'Pending',
  },
  {
    name: 'init failed, OnFailure → Pending',
    policy: 'OnFailure',
    init: ['init'],
    initStatuses: [st.terminated('i0', 2)],
    statuses: [st.waiting('c0')],
    want: 'Pending',
  },
  {
    name: 'init waiting after exit 0 → not pending; app unknown → Pending',
    init: ['init'],
    initStatuses: [st.waiting('i0', 0)],
    statuses: [],
    want: 'Pending',
  },
  {
    name: 'init pending but a regular container started → Running',
    init: ['init'],
    initStatuses: [st.waiting('i0')],
    statuses: [st.running('c0')],
    want: 'Running',
  },

  // sidecars
  { name: 'sidecar without status → Pending', init: ['side'], statuses: [], want: 'Pending' },
  { name: 'sidecar running, not started → Pending', init: ['side'], initStatuses: [st.running('s0', { started: false })], statuses: [], want: 'Pending' },
  {
    name: 'sidecar running started, app running → Running',
    init: ['side'],
    initStatuses: [st.running('s0', { started: true })],
    statuses: [st.running('c0')],
    want: 'Running',
  },
  {
    name: 'sidecar restarting (waiting, last term) with app running → Running',
    init: ['side'],
    initStatuses: [st.waiting('s0', 1)],
    statuses: [st.running('c0')],
    want: 'Running',
  },
  {
    name: 'sidecar waiting never ran → Pending even with app running',
    init: ['side'],
    initStatuses: [st.waiting('s0')],
    statuses: [st.running('c0')],
    want: 'Pending',
  },
  {
    name: 'sidecar running not started but app has run → Running',
    init: ['side'],
    initStatuses: [st.running('s0', { started: false })],
    statuses: [st.running('c0')],
    want: 'Running',
  },
  {
    name: 'sidecar terminated is ignored: app exit 0, Never → Succeeded',
    policy: 'Never',
    init: ['side'],
    initStatuses: [st.terminated('s0', 137)],
    statuses: [st.terminated('c0', 0)],
    want: 'Succeeded',
  },
  {
    name: 'sidecar still running, app done, Never → Running',
    policy: 'Never',
    init: ['side'],
    initStatuses: [st.running('s0', { started: true })],
    statuses: [st.terminated('c0', 0)],
    want: 'Running',
  },
  {
    name: 'sidecar with empty state → Pending (unknown)',
    init: ['side'],
    initStatuses: [st.empty('s0')],
    statuses: [st.terminated('c0', 0)],
    want: 'Pending',
  },
  {
    name: 'sidecar failed exit is not an init failure under Never',
    policy: 'Never',
    init: ['side'],
    initStatuses: [st.waiting('s0', 1)],
    statuses: [st.running('c0')],
    want: 'Running',
  },
  {
    name: 'terminal with sidecars stopped and app failed → Failed',
    policy: 'Always',
    init: ['init', 'side'],
    initStatuses: [st.terminated('i0', 0), st.terminated('s1', 143)],
    statuses: [st.terminated('c0', 1)],
    terminal: true,
    want: 'Failed',
  },
];

test('getPhase table', () => {
  for (const c of cases) {
    const initContainers = (c.init ?? []).map((k, i) => (k === 'side' ? sidecar(`s${i}`) : container(`i${i}`)));
    const containers = Array.from({ length: c.regular ?? 1 }, (_, i) => container(`c${i}`));
    const p = pod({ containers, initContainers, restartPolicy: c.policy ?? 'Always' });
    const got = getPhase(p.spec!, c.initStatuses ?? [], c.statuses, c.terminal ?? false);
    assert.equal(got, c.want, c.name);
  }
});
