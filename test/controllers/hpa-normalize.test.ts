// The HPA's normalization on an injected time (pkg/controller/podautoscaler/horizontal_test.go's
// TestScalingWithRules, TestNormalizeDesiredReplicas*, TestStoreScaleEvents cases in kind): the
// scale-up limit without behavior, the downscale stabilization window (300 s by default), the
// behavior's stabilization windows, Pods/Percent policies over their periods, selectPolicy, and the
// AbleToScale and ScalingLimited conditions with upstream's reasons.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultHorizontalPodAutoscaler, type HorizontalPodAutoscaler, type HPAScalingRules } from '../../src/api/autoscaling.js';
import { convertDesiredReplicasWithRules, HpaHistory, scaleDownLimitWithRules, scaleUpLimitWithRules } from '../../src/controllers/hpa-normalize.js';

const t0 = Date.parse('2026-01-01T12:00:00Z');
const s = (n: number) => t0 + n * 1000;

function hpa(min: number, max: number, behavior?: HorizontalPodAutoscaler['spec']['behavior']): HorizontalPodAutoscaler {
  return defaultHorizontalPodAutoscaler({
    metadata: { name: 'h', namespace: 'default' },
    spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: min, maxReplicas: max, ...(behavior ? { behavior } : {}) },
  });
}

const cond = (h: HorizontalPodAutoscaler, type: string) => {
  const c = h.status?.conditions?.find((x) => x.type === type);
  return c && `${c.status}/${c.reason}`;
};

/** generateScalingRules: a Pods and/or a Percent policy, and a stabilization window. */
function rules(
  pods: number,
  podsPeriod: number,
  percent: number,
  percentPeriod: number,
  window?: number,
  select?: HPAScalingRules['selectPolicy'],
): HPAScalingRules {
  const policies: NonNullable<HPAScalingRules['policies']> = [];
  if (pods) policies.push({ type: 'Pods', value: pods, periodSeconds: podsPeriod });
  if (percent) policies.push({ type: 'Percent', value: percent, periodSeconds: percentPeriod });
  return {
    ...(policies.length ? { policies } : {}),
    ...(window !== undefined ? { stabilizationWindowSeconds: window } : {}),
    ...(select ? { selectPolicy: select } : {}),
  };
}

test('convertDesiredReplicasWithRules: the scale-up limit max(2×current, 4), max, min', () => {
  assert.deepEqual(convertDesiredReplicasWithRules(1, 10, 1, 10), {
    replicas: 4,
    reason: 'ScaleUpLimit',
    message: 'the desired replica count is increasing faster than the maximum scale rate',
  });
  assert.deepEqual(convertDesiredReplicasWithRules(5, 20, 1, 10), {
    replicas: 10,
    reason: 'TooManyReplicas',
    message: 'the desired replica count is more than the maximum replica count',
  });
  assert.deepEqual(convertDesiredReplicasWithRules(5, 0, 2, 10), {
    replicas: 2,
    reason: 'TooFewReplicas',
    message: 'the desired replica count is less than the minimum replica count',
  });
  assert.deepEqual(convertDesiredReplicasWithRules(5, 7, 2, 10), {
    replicas: 7,
    reason: 'DesiredWithinRange',
    message: 'the desired count is within the acceptable range',
  });
});

test('without behavior: a scale-down waits out the 300 s window of higher recommendations', () => {
  const h = hpa(1, 10);
  const hist = new HpaHistory();
  hist.recordInitial('k', 4, s(0));
  assert.equal(hist.normalize(h, 'k', 4, 2, 1, s(15)), 4);
  assert.equal(cond(h, 'AbleToScale'), 'True/ScaleDownStabilized');
  assert.equal(hist.normalize(h, 'k', 4, 2, 1, s(299)), 4);
  // Past 300 s since the recommendation of 4 (made at 0 s), only the 2s remain.
  assert.equal(hist.normalize(h, 'k', 4, 2, 1, s(301)), 2);
  assert.equal(cond(h, 'AbleToScale'), 'True/ReadyForNewScale');
  assert.equal(cond(h, 'ScalingLimited'), 'False/DesiredWithinRange');
  // A scale-up is not stabilized, only limited: from 2, at most 4.
  assert.equal(hist.normalize(h, 'k', 2, 9, 1, s(302)), 4);
  assert.equal(cond(h, 'ScalingLimited'), 'True/ScaleUpLimit');
});

test('the behavior defaults: scale up 4 pods or 100 % per 15 s (Max), scale down 100 % per 15 s after the window', () => {
  const h = hpa(1, 1000, {});
  assert.deepEqual(h.spec.behavior, {
    scaleUp: {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    },
    scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
  const hist = new HpaHistory();
  // scaleUp with default behavior: 10 → 50 is limited to 20 (TestScalingWithRules).
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 10, 50, 1, s(0)), 20);
  assert.equal(cond(h, 'ScalingLimited'), 'True/ScaleUpLimit');
});

test('policies: Pods above Percent, Percent above Pods, Min selection, Disabled', () => {
  assert.equal(scaleUpLimitWithRules(10, [], [], { selectPolicy: 'Max', ...rules(100, 60, 100, 60) }, s(0)), 110);
  assert.equal(scaleUpLimitWithRules(10, [], [], { selectPolicy: 'Max', ...rules(2, 60, 100, 60) }, s(0)), 20);
  assert.equal(scaleUpLimitWithRules(10, [], [], { selectPolicy: 'Min', ...rules(2, 60, 100, 60) }, s(0)), 12);
  assert.equal(scaleUpLimitWithRules(10, [], [], { selectPolicy: 'Disabled', ...rules(2, 60, 100, 60) }, s(0)), 10);
  assert.equal(scaleDownLimitWithRules(100, [], [], { selectPolicy: 'Max', ...rules(20, 60, 1, 60) }, s(0)), 80);
  assert.equal(scaleDownLimitWithRules(100, [], [], { selectPolicy: 'Min', ...rules(20, 60, 1, 60) }, s(0)), 99);
  // Percent rounds down on the way down: 15 × 0.5 = 7.5 → 7.
  assert.equal(scaleDownLimitWithRules(15, [], [], { selectPolicy: 'Max', ...rules(0, 0, 50, 60) }, s(0)), 7);
});

test('scale events within a policy period count against it: 1 pod per 60 s allows one step per minute', () => {
  const h = hpa(1, 10, { scaleUp: { ...rules(1, 60, 0, 0), stabilizationWindowSeconds: 0 } });
  const hist = new HpaHistory();
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 2, 6, 1, s(0)), 3);
  assert.equal(cond(h, 'ScalingLimited'), 'True/ScaleUpLimit');
  hist.storeScaleEvent(h, 'k', 2, 3, s(0));
  // Within the period the step is used: no further scale-up (the limit is the current count).
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 3, 6, 1, s(30)), 3);
  // After it, one more.
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 3, 6, 1, s(61)), 4);
});

test('stabilization windows with behavior: scale-down holds the highest recommendation of its window, scale-up the lowest of its', () => {
  const h = hpa(1, 10, {
    scaleDown: { stabilizationWindowSeconds: 20, ...rules(0, 0, 100, 15) },
    scaleUp: { stabilizationWindowSeconds: 30, ...rules(4, 15, 0, 0) },
  });
  const hist = new HpaHistory();
  hist.recordInitial('k', 5, s(0));
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 5, 1, 1, s(10)), 5);
  assert.equal(cond(h, 'AbleToScale'), 'True/ScaleDownStabilized');
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 5, 1, 1, s(21)), 1);
  assert.equal(cond(h, 'AbleToScale'), 'True/ReadyForNewScale');
  // A scale-up within 30 s of the recommendations of 1 is held at the lowest of them (not below current).
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 1, 4, 1, s(25)), 1);
  assert.equal(cond(h, 'AbleToScale'), 'True/ScaleUpStabilized');
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 1, 4, 1, s(52)), 4);
});

test('a behavior without a scale-down window takes the controller’s (300 s)', () => {
  const h = hpa(1, 10, { scaleDown: rules(0, 0, 100, 15) });
  const hist = new HpaHistory();
  hist.recordInitial('k', 3, s(0));
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 3, 1, 1, s(299)), 3);
  assert.equal(hist.normalizeWithBehaviors(h, 'k', 3, 1, 1, s(301)), 1);
});
