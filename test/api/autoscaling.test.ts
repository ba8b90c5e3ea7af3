// autoscaling/v2 defaults and the autoscaling/v1 ⇄ v2 conversion (pkg/apis/autoscaling/v1/conversion.go):
// targetCPUUtilizationPercentage ⇄ a Resource cpu Utilization metric, the other metrics, current
// metrics, conditions and behavior kept in the autoscaling.alpha.kubernetes.io annotations; and the
// validation messages of the API server.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultHorizontalPodAutoscaler, hpaFromV1, hpaToV1, type HorizontalPodAutoscaler } from '../../src/api/autoscaling.js';
import { formatFieldError } from '../../src/api/field-errors.js';
import { validateHorizontalPodAutoscaler } from '../../src/api/validation/autoscaling.js';

const ref = { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' };

test('a v1 object without a target gets the default cpu 80 %; minReplicas 1', () => {
  const v2 = defaultHorizontalPodAutoscaler(hpaFromV1({ metadata: { name: 'h' }, spec: { scaleTargetRef: ref, maxReplicas: 5 } }));
  assert.deepEqual(v2.spec, {
    scaleTargetRef: ref,
    minReplicas: 1,
    maxReplicas: 5,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
  });
});

test('v2 → v1 → v2 keeps every metric, the current metrics, the conditions and the behavior', () => {
  const v2: HorizontalPodAutoscaler = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h', namespace: 'default', annotations: { team: 'a' } },
    spec: {
      scaleTargetRef: ref,
      minReplicas: 2,
      maxReplicas: 9,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 10, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 15 }] } },
    },
    status: {
      currentReplicas: 3,
      desiredReplicas: 4,
      lastScaleTime: '2026-01-01T00:00:00Z',
      currentMetrics: [
        { type: 'Resource', resource: { name: 'memory', current: { averageValue: '400Mi' } } },
        { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 70, averageValue: '350m' } } },
      ],
      conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' }],
    },
  };
  const v1 = hpaToV1(v2);
  assert.equal(v1.apiVersion, 'autoscaling/v1');
  assert.equal(v1.spec?.targetCPUUtilizationPercentage, 50);
  assert.equal(v1.status?.currentCPUUtilizationPercentage, 70);
  assert.deepEqual(v1.status, { lastScaleTime: '2026-01-01T00:00:00Z', currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 70 });
  const a = v1.metadata!.annotations!;
  assert.equal(a['autoscaling.alpha.kubernetes.io/metrics'], '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}}]');
  assert.match(a['autoscaling.alpha.kubernetes.io/current-metrics']!, /"currentAverageUtilization":70/);
  assert.match(a['autoscaling.alpha.kubernetes.io/conditions']!, /ReadyForNewScale/);
  assert.match(a['autoscaling.alpha.kubernetes.io/behavior']!, /"stabilizationWindowSeconds":10/);
  const back = hpaFromV1(v1);
  assert.deepEqual(back.metadata, v2.metadata);
  assert.deepEqual(back.spec.behavior, v2.spec.behavior);
  // The cpu target comes first after a round trip (as upstream's conversion puts it).
  assert.deepEqual(back.spec.metrics, [v2.spec.metrics![1], v2.spec.metrics![0]]);
  assert.deepEqual(back.status, v2.status);
});

test('validation in the API server’s words', () => {
  const errs = validateHorizontalPodAutoscaler(
    defaultHorizontalPodAutoscaler({
      metadata: { name: 'h', namespace: 'default' },
      spec: {
        scaleTargetRef: { kind: '', name: 'web' },
        minReplicas: 0,
        maxReplicas: 0,
      },
    }),
  ).map(formatFieldError);
  assert.deepEqual(errs, [
    'spec.maxReplicas: Invalid value: 0: must be greater than 0',
    'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
    'spec.scaleTargetRef.kind: Required value',
  ]);
  const metricErrs = validateHorizontalPodAutoscaler(
    defaultHorizontalPodAutoscaler({
      metadata: { name: 'h', namespace: 'default' },
      spec: {
        scaleTargetRef: ref,
        maxReplicas: 3,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } }],
        behavior: { scaleDown: { stabilizationWindowSeconds: 4000 } },
      },
    }),
  ).map(formatFieldError);
  assert.deepEqual(metricErrs, ['spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0']);
  const behaviorErrs = validateHorizontalPodAutoscaler(
    defaultHorizontalPodAutoscaler({
      metadata: { name: 'h', namespace: 'default' },
      spec: {
        scaleTargetRef: ref,
        maxReplicas: 3,
        behavior: { scaleDown: { stabilizationWindowSeconds: 4000, policies: [{ type: 'Pods', value: 0, periodSeconds: 2000 }] } },
      },
    }),
  ).map(formatFieldError);
  assert.deepEqual(behaviorErrs, [
    'spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800',
    'spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero',
    'spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600',
  ]);
});
