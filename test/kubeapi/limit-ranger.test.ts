// The LimitRanger (limit-ranger.ts) and LimitRange defaults and validation (api/validation/limit-range.ts)
// against upstream's rules and words: default requests and limits per container with the
// kubernetes.io/limit-ranger annotation, min, max and maxLimitRequestRatio per Container, the Pod limit
// on the pod's total, and the refusals as `pods "x" is forbidden: …`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { formatFieldError } from '../../src/api/field-errors.js';
import { defaultLimitRange, validateLimitRange, type LimitRange } from '../../src/api/validation/limit-range.js';
import { admitPodLimits, limitRangerAnnotation } from '../../src/kubeapi/limit-ranger.js';

function lr(limits: NonNullable<LimitRange['spec']>['limits'], ns = 'default'): LimitRange {
  return defaultLimitRange({ metadata: { name: 'limits', namespace: ns }, spec: { limits } });
}

function pod(resources: Record<string, Record<string, string>> = {}, init?: Record<string, Record<string, string>>): Pod {
  return {
    metadata: { name: 'x', namespace: 'default' },
    spec: {
      containers: [{ name: 'app', image: 'busybox', resources }],
      ...(init ? { initContainers: [{ name: 'setup', image: 'busybox', resources: init }] } : {}),
    },
  };
}

function refusal(p: Pod, ranges: LimitRange[]): string {
  try {
    admitPodLimits(p, ranges);
  } catch (err) {
    assert.equal((err as { code?: number }).code, 403);
    return (err as Error).message;
  }
  assert.fail('the pod was admitted');
}

test('a Container limit defaults default from max, defaultRequest from default, then from min', () => {
  const r = lr([{ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' }, default: { memory: '256Mi' } }]);
  const item = r.spec!.limits[0]!;
  assert.deepEqual(item.default, { memory: '256Mi', cpu: '2' });
  assert.deepEqual(item.defaultRequest, { memory: '256Mi', cpu: '2' });
  const minOnly = lr([{ type: 'Container', min: { cpu: '100m' } }]).spec!.limits[0]!;
  assert.deepEqual(minOnly.defaultRequest, { cpu: '100m' });
  assert.equal(minOnly.default, undefined);
});

test('defaults fill what a container lacks and the annotation says what was set', () => {
  const p = pod({ limits: { memory: '128Mi' } });
  admitPodLimits(p, [lr([{ type: 'Container', default: { cpu: '500m', memory: '512Mi' }, defaultRequest: { cpu: '250m', memory: '256Mi' } }])]);
  assert.deepEqual(p.spec!.containers[0]!.resources, { limits: { memory: '128Mi', cpu: '500m' }, requests: { cpu: '250m', memory: '256Mi' } });
  assert.equal(p.metadata!.annotations![limitRangerAnnotation], 'LimitRanger plugin set: cpu, memory request for container app; cpu limit for container app');
});

test('init containers get the defaults too, named as init containers', () => {
  const p = pod({ requests: { cpu: '100m' }, limits: { cpu: '100m' } }, {});
  admitPodLimits(p, [lr([{ type: 'Container', default: { cpu: '300m' } }])]);
  assert.equal(
    p.metadata!.annotations![limitRangerAnnotation],
    'LimitRanger plugin set: cpu request for init container setup; cpu limit for init container setup',
  );
});

test('max and min per Container, in upstream words', () => {
  const max = lr([{ type: 'Container', max: { cpu: '1' } }]);
  assert.equal(refusal(pod({ limits: { cpu: '2' } }), [max]), 'pods "x" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  const min = lr([{ type: 'Container', min: { memory: '64Mi' } }]);
  assert.equal(refusal(pod({ requests: { memory: '32Mi' } }), [min]), 'pods "x" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi');
  // No default for a Pod limit: a pod with no limit is refused.
  const podMax = lr([{ type: 'Pod', max: { memory: '1Gi' } }]);
  assert.equal(refusal(pod(), [podMax]), 'pods "x" is forbidden: maximum memory usage per Pod is 1Gi.  No limit is specified');
});

test('the Pod limit is checked on the sum of the containers, at least the largest init container', () => {
  const podMax = lr([{ type: 'Pod', max: { cpu: '1' } }]);
  const p: Pod = {
    metadata: { name: 'x', namespace: 'default' },
    spec: {
      containers: [
        { name: 'a', image: 'busybox', resources: { limits: { cpu: '600m' } } },
        { name: 'b', image: 'busybox', resources: { limits: { cpu: '600m' } } },
      ],
    },
  };
  assert.equal(refusal(p, [podMax]), 'pods "x" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m');
  admitPodLimits(pod({ limits: { cpu: '1' } }), [podMax]);
});

test('maxLimitRequestRatio, and several refusals aggregated', () => {
  const ratio = lr([{ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }]);
  assert.equal(
    refusal(pod({ requests: { cpu: '100m' }, limits: { cpu: '500m' } }), [ratio]),
    'pods "x" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000',
  );
  const both = lr([{ type: 'Container', max: { cpu: '1', memory: '1Gi' } }]);
  assert.equal(
    refusal(pod({ limits: { cpu: '2', memory: '2Gi' } }), [both]),
    'pods "x" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi]',
  );
});

test("another namespace's ranges do not apply", () => {
  admitPodLimits(pod({ limits: { cpu: '4' } }), [lr([{ type: 'Container', max: { cpu: '1' } }], 'other')]);
});

test('LimitRange validation messages', () => {
  const errs = validateLimitRange({
    metadata: { name: 'l', namespace: 'default' },
    spec: {
      limits: [
        { type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } },
        { type: 'Container' },
        { type: 'Pod', default: { cpu: '1' } },
        { type: 'Node' },
        { type: 'PersistentVolumeClaim', max: { cpu: '1' } },
      ],
    },
  }).map(formatFieldError);
  assert.deepEqual(errs, [
    'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
    'spec.limits[1].type: Duplicate value: "Container"',
    "spec.limits[2].default: Forbidden: may not be specified when `type` is 'Pod'",
    'spec.limits[3].type: Invalid value: "Node": must be a standard limit type or fully qualified',
    'spec.limits[4].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
  ]);
});
