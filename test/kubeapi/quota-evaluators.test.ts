// Quota accounting (quota-evaluators.ts) against upstream's evaluators and checkRequest: pods count
// while not terminal (count/pods always), compute resources from the pod's total, services' nodeports
// and load balancers, count/<resource>.<group>, scopes, the per-container `must specify` constraint and
// the `exceeded quota` refusal's text.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { formatFieldError } from '../../src/api/field-errors.js';
import { validateResourceQuota, type ResourceQuota } from '../../src/api/validation/resource-quota.js';
import { checkCreate, checkRequest, computeUsed, type CountedObject } from '../../src/kubeapi/quota-evaluators.js';

const now = Date.parse('2026-01-01T00:00:00Z');
const podKind = { resource: 'pods', group: '' };

function pod(name: string, resources: Record<string, Record<string, string>> = {}, extra: Partial<Pod> = {}): Pod {
  return { metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'busybox', resources }] }, ...extra };
}

function quota(hard: Record<string, string>, spec: Partial<NonNullable<ResourceQuota['spec']>> = {}, used?: Record<string, string>): ResourceQuota {
  return { metadata: { name: 'q', namespace: 'default' }, spec: { hard, ...spec }, status: { hard, ...(used ? { used } : {}) } };
}

const pods = (...p: Pod[]): CountedObject[] => p.map((object) => ({ kind: podKind, object }));

test('used counts non-terminal pods for pods and compute resources, every pod for count/pods', () => {
  const q = quota({ pods: '10', 'count/pods': '10', 'requests.cpu': '4', 'limits.memory': '4Gi', 'requests.memory': '1Gi' });
  const used = computeUsed(
    q,
    pods(
      pod('a', { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '256Mi' } }),
      pod('b', { requests: { cpu: '1' }, limits: { memory: '256Mi' } }),
      pod('done', { requests: { cpu: '1' } }, { status: { phase: 'Succeeded' } }),
      pod(
        'gone',
        { requests: { cpu: '1' } },
        { metadata: { name: 'gone', namespace: 'default', deletionTimestamp: '2025-12-31T23:00:00Z', deletionGracePeriodSeconds: 30 } },
      ),
    ),
    now,
  );
  assert.deepEqual(used, { 'count/pods': '4', 'limits.memory': '512Mi', pods: '2', 'requests.cpu': '1250m', 'requests.memory': '128Mi' });
});

test('services: nodeports of NodePort and LoadBalancer services, loadbalancers; object counts by group', () => {
  const q = quota({ services: '5', 'services.nodeports': '5', 'services.loadbalancers': '1', configmaps: '3', 'count/deployments.apps': '2' });
  const svc = (type: string, ports: number) => ({
    kind: { resource: 'services', group: '' },
    object: { spec: { type, ports: Array.from({ length: ports }, () => ({})) } },
  });
  const used = computeUsed(
    q,
    [
      svc('ClusterIP', 1),
      svc('NodePort', 2),
      svc('LoadBalancer', 1),
      { kind: { resource: 'configmaps', group: '' }, object: {} },
      { kind: { resource: 'deployments', group: 'apps' }, object: {} },
    ],
    now,
  );
  assert.deepEqual(used, { configmaps: '1', 'count/deployments.apps': '1', services: '3', 'services.loadbalancers': '1', 'services.nodeports': '3' });
});

test('scopes select the pods counted', () => {
  const best = pod('best');
  const burst = pod('burst', { requests: { cpu: '100m' } });
  const term = pod('term', {}, { spec: { containers: [{ name: 'app', image: 'busybox' }], activeDeadlineSeconds: 60 } });
  const high = pod('high', {}, { spec: { containers: [{ name: 'app', image: 'busybox' }], priorityClassName: 'high' } });
  const count = (spec: Partial<NonNullable<ResourceQuota['spec']>>) => computeUsed(quota({ pods: '10' }, spec), pods(best, burst, term, high), now).pods;
  assert.equal(count({ scopes: ['BestEffort'] }), '3');
  assert.equal(count({ scopes: ['NotBestEffort'] }), '1');
  assert.equal(count({ scopes: ['Terminating'] }), '1');
  assert.equal(count({ scopes: ['NotTerminating', 'BestEffort'] }), '2');
  assert.equal(count({ scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } }), '1');
});

test('checkCreate: exceeded quota in upstream words, and the usage added when admitted', () => {
  const full = quota({ pods: '2' }, {}, { pods: '2' });
  assert.deepEqual(checkCreate([full], podKind, pod('x'), now), { refusal: 'exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2' });
  const room = quota({ pods: '2', 'requests.cpu': '1' }, {}, { pods: '1', 'requests.cpu': '500m' });
  const d = checkCreate([room], podKind, pod('x', { requests: { cpu: '300m' } }), now);
  assert.ok('updated' in d);
  assert.deepEqual(d.updated[0]!.status!.used, { pods: '2', 'requests.cpu': '800m' });
  const over = checkCreate([room], podKind, pod('x', { requests: { cpu: '600m' } }), now);
  assert.deepEqual(over, { refusal: 'exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1' });
});

test('checkCreate: a quota on compute resources needs them set in every container', () => {
  const q = quota({ 'limits.cpu': '2', 'requests.memory': '1Gi' }, {}, { 'limits.cpu': '0', 'requests.memory': '0' });
  assert.deepEqual(checkCreate([q], podKind, pod('x'), now), { refusal: 'failed quota: q: must specify limits.cpu for: app; requests.memory for: app' });
  // A quota that does not select the pod does not constrain it; an object of another kind passes.
  const scoped = quota({ 'limits.cpu': '2' }, { scopes: ['Terminating'] }, { 'limits.cpu': '0' });
  assert.deepEqual(checkCreate([scoped], podKind, pod('x'), now), { updated: [] });
  assert.deepEqual(checkCreate([q], { resource: 'configmaps', group: '' }, {}, now), { updated: [] });
});

test('checkRequest on an update charges what it adds: a Service turned NodePort counts its nodeports', () => {
  const svcKind = { resource: 'services', group: '' };
  const q = quota({ services: '5', 'services.nodeports': '1' }, {}, { services: '1', 'services.nodeports': '0' });
  const before = { spec: { type: 'ClusterIP', ports: [{ port: 80 }, { port: 81 }] } };
  const after = { spec: { type: 'NodePort', ports: [{ port: 80 }, { port: 81 }] } };
  assert.deepEqual(checkRequest([q], svcKind, after, before, now), {
    refusal: 'exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1',
  });
  // An update that adds nothing (the object counted already) passes and changes no usage.
  assert.deepEqual(checkRequest([q], svcKind, before, before, now), { updated: [] });
});

test('ResourceQuota validation messages', () => {
  const errs = validateResourceQuota({
    metadata: { name: 'q', namespace: 'default' },
    spec: { hard: { pods: '1.5', widgets: '1', cpu: '-1', memory: '1Gi' }, scopes: ['BestEffort', 'NotBestEffort'] },
  }).map(formatFieldError);
  assert.deepEqual(errs, [
    'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    'spec.hard[pods]: Invalid value: "1.5": must be an integer',
    'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified',
    'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota',
    'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: unsupported scope applied to resource',
    'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: unsupported scope applied to resource',
    'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes',
  ]);
});
