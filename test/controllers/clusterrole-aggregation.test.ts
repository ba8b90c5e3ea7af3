// The ClusterRole aggregation controller's rules (pkg/controller/clusterroleaggregation): each
// selector's roles by name, their rules appended once, the aggregated role itself left out; and the
// bootstrap policy's aggregated roles built from its aggregate-to-* roles (view within edit within admin).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterRole } from '../../src/api/validation/rbac.js';
import { aggregatedRules } from '../../src/controllers/clusterrole-aggregation.js';
import { bootstrapRoleObjects } from '../../src/kubeapi/rbac/bootstrap.js';

const r = (name: string, labels: Record<string, string>, ...verbs: string[]): ClusterRole => ({
  metadata: { name, labels },
  rules: verbs.map((v) => ({ verbs: [v], apiGroups: [''], resources: ['pods'] })),
});

test('aggregatedRules: selected roles in name order, rules once, selectors in order, itself excluded', () => {
  const agg: ClusterRole = {
    metadata: { name: 'agg', labels: { a: 'true' } },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'true' } }, { matchLabels: { b: 'true' } }] },
    rules: [{ verbs: ['stale'], apiGroups: [''], resources: ['x'] }],
  };
  const all = [
    agg,
    r('zeta', { a: 'true' }, 'list'),
    r('alpha', { a: 'true' }, 'get', 'list'),
    r('beta', { b: 'true' }, 'watch', 'get'),
    r('other', {}, 'delete'),
  ];
  assert.deepEqual(
    aggregatedRules(agg, all).map((x) => x.verbs![0]),
    ['get', 'list', 'watch'],
  );
  assert.deepEqual(aggregatedRules({ ...agg, aggregationRule: { clusterRoleSelectors: [] } }, all), []);
});

test('the bootstrap policy: view, edit and admin aggregate their aggregate-to-* roles and each other', () => {
  // As the controller converges: each change syncs every aggregated role again, until none changes.
  const roles: ClusterRole[] = bootstrapRoleObjects();
  for (let changed = true; changed;) {
    changed = false;
    for (const [i, role] of roles.entries()) {
      if (!role.aggregationRule) continue;
      const next = aggregatedRules(role, roles);
      if (JSON.stringify(next) !== JSON.stringify(role.rules ?? [])) {
        roles[i] = { ...role, rules: next };
        changed = true;
      }
    }
  }
  const rules = (name: string) => roles.find((x) => x.metadata?.name === name)!.rules ?? [];
  const allows = (name: string, verb: string, resource: string) => rules(name).some((x) => x.verbs?.includes(verb) && x.resources?.includes(resource));
  assert.ok(allows('view', 'list', 'pods'));
  assert.ok(!allows('view', 'list', 'secrets'));
  assert.ok(!allows('view', 'create', 'pods'));
  assert.ok(allows('edit', 'create', 'pods'));
  assert.ok(allows('edit', 'list', 'pods'), 'edit holds view (view carries aggregate-to-edit)');
  assert.ok(allows('admin', 'create', 'rolebindings'));
  for (const x of roles) {
    assert.equal(x.metadata?.annotations?.['rbac.authorization.kubernetes.io/autoupdate'], 'true');
    assert.equal(x.metadata?.labels?.['kubernetes.io/bootstrapping'], 'rbac-defaults');
  }
});
