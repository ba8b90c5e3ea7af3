// QoS class by Kubernetes' ComputePodQOS rules.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computePodQOS, getPodQOS } from '../../src/status/qos.js';
import type { ResourceRequirements } from '../../src/api/types.js';
import { container, pod } from './fixtures.js';

const r = (requests?: Record<string, string>, limits?: Record<string, string>): ResourceRequirements => {
  const out: ResourceRequirements = {};
  if (requests) out.requests = requests;
  if (limits) out.limits = limits;
  return out;
};

test('QoS table', () => {
  const cases: { name: string; containers: ResourceRequirements[]; init?: ResourceRequirements[]; want: string }[] = [
    { name: 'nothing set', containers: [{}], want: 'BestEffort' },
    { name: 'zero requests only', containers: [r({ cpu: '0', memory: '0' })], want: 'BestEffort' },
    { name: 'only non-QoS resources', containers: [r({ 'ephemeral-storage': '1Gi' }, { 'nvidia.com/gpu': '1' })], want: 'BestEffort' },
    { name: 'requests only', containers: [r({ cpu: '100m' })], want: 'Burstable' },
    { name: 'limits equal requests', containers: [r({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })], want: 'Guaranteed' },
    { name: 'equal in other units', containers: [r({ cpu: '1000m', memory: '1024Mi' }, { cpu: '1', memory: '1Gi' })], want: 'Guaranteed' },
    { name: 'limits only (requests default to limits)', containers: [r(undefined, { cpu: '500m', memory: '128Mi' })], want: 'Guaranteed' },
    { name: 'request lower than limit', containers: [r({ cpu: '500m', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })], want: 'Burstable' },
    { name: 'memory limit missing', containers: [r({ cpu: '1' }, { cpu: '1' })], want: 'Burstable' },
    {
      name: 'one container without limits',
      containers: [r({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }), {}],
      want: 'Burstable',
    },
    {
      name: 'init container counts: guaranteed everywhere',
      containers: [r(undefined, { cpu: '1', memory: '1Gi' })],
      init: [r(undefined, { cpu: '2', memory: '2Gi' })],
      want: 'Guaranteed',
    },
    {
      name: 'init container without limits makes it Burstable',
      containers: [r(undefined, { cpu: '1', memory: '1Gi' })],
      init: [r({ cpu: '100m' })],
      want: 'Burstable',
    },
    { name: 'zero limits count as unset', containers: [r({ cpu: '1', memory: '1Gi' }, { cpu: '0', memory: '1Gi' })], want: 'Burstable' },
  ];
  for (const c of cases) {
    const p = pod({
      containers: c.containers.map((resources, i) => container(`c${i}`, { resources })),
      initContainers: c.init?.map((resources, i) => container(`i${i}`, { resources })),
    });
    assert.equal(computePodQOS(p), c.want, c.name);
  }
});

test('getPodQOS keeps a class already in the status', () => {
  const p = { ...pod({}), status: { qosClass: 'Burstable' } };
  assert.equal(getPodQOS(p), 'Burstable');
  assert.equal(getPodQOS(pod({})), 'BestEffort');
});
