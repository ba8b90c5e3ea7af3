// RBAC on a real `podvisor agent` driven by the real kubectl, 1.20 and 1.32: the bootstrap roles and
// bindings with kubectl's columns; `kubectl auth can-i` as the admin and `--as` a ServiceAccount (no,
// then yes once a RoleBinding to `view` exists), `auth can-i --list`; `kubectl get pods --as` a
// ServiceAccount refused with kube-apiserver's Forbidden message, then allowed; `kubectl create
// role|clusterrole|rolebinding|clusterrolebinding`; a ClusterRole labelled aggregate-to-view
// aggregated into `view`; a binding's roleRef refused a change.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl132Path, kubectlPath, runKubectl, waitFor, type KubectlResult } from './harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip);

type Api = { kubeconfig: string; dir: string };
type Run = (a: Api, args: string[]) => Promise<KubectlResult>;

const kubectls: Array<[string, string | undefined]> = [
  ['kubectl 1.20', kubectlPath],
  ['kubectl 1.32', kubectl132Path],
];

test('the bootstrap policy: cluster roles and bindings with kubectl get columns', { skip }, async (t) => {
  const a = env.api(t);
  const run: Run = (api, args) => runKubectl(kubectlPath!, api, args);
  const roles = await run(a, ['get', 'clusterroles']);
  assert.equal(roles.code, 0, roles.stderr);
  assert.match(roles.stdout, /^NAME +CREATED AT\n/);
  for (const name of ['admin', 'cluster-admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer', 'system:node']) {
    assert.match(roles.stdout, new RegExp(`^${name} +\\d{4}-\\d\\d-\\d\\dT`, 'm'), name);
  }
  const bindings = await run(a, ['get', 'clusterrolebindings', '-o', 'wide']);
  assert.equal(bindings.code, 0, bindings.stderr);
  assert.match(bindings.stdout, /^NAME +ROLE +AGE +USERS +GROUPS +SERVICEACCOUNTS\n/);
  assert.match(bindings.stdout, /^cluster-admin +ClusterRole\/cluster-admin +\S+ +system:masters/m);
  assert.match(bindings.stdout, /^system:discovery +ClusterRole\/system:discovery +\S+ +system:authenticated/m);
  const view = await run(a, ['get', 'clusterrole', 'view', '-o', 'json']);
  const obj = JSON.parse(view.stdout) as { metadata: { annotations: Record<string, string> }; rules: Array<{ resources?: string[] }> };
  assert.equal(obj.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true');
  assert.ok(
    obj.rules.some((r) => r.resources?.includes('pods')),
    'view holds the rules of system:aggregate-to-view',
  );
});

for (const [label, bin] of kubectls) {
  test(
    `${label}: auth can-i as the admin and --as a ServiceAccount; get pods refused, then allowed by a RoleBinding`,
    { skip: skip || (bin ? false : `${label} is not installed`) },
    async (t) => {
      const a = env.api(t);
      const run: Run = (api, args) => runKubectl(bin!, api, args);
      const sa = label.endsWith('1.20') ? 'reader120' : 'reader132';
      const as = `--as=system:serviceaccount:default:${sa}`;
      const admin = await run(a, ['auth', 'can-i', 'create', 'pods']);
      assert.deepEqual([admin.code, admin.stdout.trim()], [0, 'yes'], admin.stderr);
      const no = await run(a, ['auth', 'can-i', 'list', 'pods', as]);
      assert.deepEqual([no.code, no.stdout.trim()], [1, 'no'], no.stderr);
      const refused = await run(a, ['get', 'pods', as]);
      assert.notEqual(refused.code, 0);
      assert.match(
        refused.stderr,
        new RegExp(
          `Error from server \\(Forbidden\\): pods is forbidden: User "system:serviceaccount:default:${sa}" cannot list resource "pods" in API group "" in the namespace "default"`,
        ),
      );
      const bound = await run(a, ['create', 'rolebinding', `${sa}-view`, '--clusterrole=view', `--serviceaccount=default:${sa}`]);
      assert.equal(bound.code, 0, bound.stderr);
      const yes = await run(a, ['auth', 'can-i', 'list', 'pods', as]);
      assert.deepEqual([yes.code, yes.stdout.trim()], [0, 'yes'], yes.stderr);
      // Bound in default only; and view does not create.
      assert.equal((await run(a, ['auth', 'can-i', 'list', 'pods', '-n', 'kube-system', as])).stdout.trim(), 'no');
      assert.equal((await run(a, ['auth', 'can-i', 'create', 'pods', as])).stdout.trim(), 'no');
      const allowed = await run(a, ['get', 'pods', as]);
      assert.equal(allowed.code, 0, allowed.stderr);
      const list = await run(a, ['auth', 'can-i', '--list', as]);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /^Resources +Non-Resource URLs +Resource Names +Verbs\n/);
      assert.match(list.stdout, /^selfsubjectaccessreviews\.authorization\.k8s\.io +\[\] +\[\] +\[create\]$/m);
      assert.match(list.stdout, /^pods +\[\] +\[\] +\[get list watch\]$/m);
      assert.match(list.stdout, /^ +\[\/api\/\*\] +\[\] +\[get\]$/m);
      const adminList = await run(a, ['auth', 'can-i', '--list']);
      assert.match(adminList.stdout, /^\*\.\* +\[\] +\[\] +\[\*\]$/m);
      // Impersonating a group the admin names; a user in no binding is refused.
      const bob = await run(a, ['get', 'deployments', '-A', '--as=bob', '--as-group=staff']);
      assert.match(bob.stderr, /deployments\.apps is forbidden: User "bob" cannot list resource "deployments" in API group "apps" at the cluster scope/);
    },
  );
}

test('kubectl create role, clusterrole, rolebinding, clusterrolebinding; aggregation into view; roleRef immutable', { skip }, async (t) => {
  const a = env.api(t);
  const run: Run = (api, args) => runKubectl(kubectlPath!, api, args);
  const ok = async (args: string[], out: RegExp) => {
    const r = await run(a, args);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, out);
  };
  await ok(['create', 'role', 'pod-reader', '--verb=get,list', '--resource=pods'], /role.rbac.authorization.k8s.io\/pod-reader created/);
  await ok(
    ['create', 'clusterrole', 'lease-reader', '--verb=get,list,watch', '--resource=leases'],
    /clusterrole.rbac.authorization.k8s.io\/lease-reader created/,
  );
  await ok(
    ['create', 'rolebinding', 'pod-reader', '--role=pod-reader', '--user=alice', '--group=devs'],
    /rolebinding.rbac.authorization.k8s.io\/pod-reader created/,
  );
  await ok(
    ['create', 'clusterrolebinding', 'lease-reader', '--clusterrole=lease-reader', '--serviceaccount=kube-system:watcher'],
    /clusterrolebinding.rbac.authorization.k8s.io\/lease-reader created/,
  );
  await ok(['get', 'rolebindings', '-o', 'wide'], /^pod-reader +Role\/pod-reader +\S+ +alice +devs/m);
  await ok(['get', 'roles'], /^pod-reader +\d{4}-/m);
  assert.equal((await run(a, ['auth', 'can-i', 'list', 'pods', '--as=alice'])).stdout.trim(), 'yes');
  assert.equal((await run(a, ['auth', 'can-i', 'delete', 'pods', '--as=alice'])).stdout.trim(), 'no');
  assert.equal(
    (await run(a, ['auth', 'can-i', 'watch', 'leases', '-n', 'kube-node-lease', '--as=system:serviceaccount:kube-system:watcher'])).stdout.trim(),
    'yes',
  );
  // A ClusterRole labelled aggregate-to-view: its rules join view's.
  await ok(['label', 'clusterrole', 'lease-reader', 'rbac.authorization.k8s.io/aggregate-to-view=true'], /labeled/);
  await waitFor('view aggregates lease-reader', async () => {
    const r = await run(a, ['get', 'clusterrole', 'view', '-o', 'json']);
    return (JSON.parse(r.stdout) as { rules: Array<{ resources?: string[] }> }).rules.some((x) => x.resources?.includes('leases'));
  });
  const changed = await run(a, ['patch', 'rolebinding', 'pod-reader', '--type=merge', '-p', '{"roleRef":{"kind":"ClusterRole","name":"edit"}}']);
  assert.notEqual(changed.code, 0);
  assert.match(changed.stderr, /roleRef: Invalid value: \{APIGroup:rbac.authorization.k8s.io Kind:ClusterRole Name:edit\}: cannot change roleRef/);
});
