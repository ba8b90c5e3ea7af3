// The ServiceAccount admission of a created pod: the default account, the refusal in the API
// server's words, automountServiceAccountToken on the pod or its account, the kube-api-access volume
// and its read-only mount in every container, and no volume where the runtime mounts none.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../../src/api/types.js';
import type { ServiceAccount } from '../../../src/api/service-account.js';
import { admitServiceAccount, tokenMountPath } from '../../../src/kubeapi/serviceaccount/admission.js';

const accounts = new Map<string, ServiceAccount>([
  ['ns/default', { metadata: { name: 'default', namespace: 'ns' } }],
  ['ns/quiet', { metadata: { name: 'quiet', namespace: 'ns' }, automountServiceAccountToken: false, imagePullSecrets: [{ name: 'reg' }] }],
]);
const lookup = { serviceAccount: (ns: string, n: string) => accounts.get(`${ns}/${n}`), mountsVolumes: true, randomIndex: () => 0 };

function pod(spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: 'x', namespace: 'ns' },
    spec: { containers: [{ name: 'a', image: 'busybox' }], initContainers: [{ name: 'i', image: 'busybox' }], ...spec },
  };
}

test('a pod without an account runs as default, with the projected token volume in every container', () => {
  const p = pod();
  assert.equal(admitServiceAccount(p, lookup), 'mounted');
  assert.equal(p.spec!.serviceAccountName, 'default');
  assert.equal(p.spec!.serviceAccount, 'default');
  assert.deepEqual(p.spec!.volumes, [
    {
      name: 'kube-api-access-bbbbb',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 0o644,
      },
    },
  ]);
  for (const c of [...p.spec!.initContainers!, ...p.spec!.containers]) {
    assert.deepEqual(c.volumeMounts, [{ name: 'kube-api-access-bbbbb', readOnly: true, mountPath: tokenMountPath }]);
  }
});

test('an account that does not exist is refused as the API server refuses it', () => {
  assert.throws(() => admitServiceAccount(pod({ serviceAccountName: 'nope' }), lookup), {
    code: 403,
    message: 'pods "x" is forbidden: error looking up service account ns/nope: serviceaccount "nope" not found',
  });
});

test('automountServiceAccountToken: false on the account or the pod; the pod wins; the account’s pull secrets', () => {
  const q = pod({ serviceAccountName: 'quiet' });
  assert.equal(admitServiceAccount(q, lookup), 'automount-off');
  assert.equal(q.spec!.volumes, undefined);
  assert.deepEqual(q.spec!.imagePullSecrets, [{ name: 'reg' }]);
  const on = pod({ serviceAccountName: 'quiet', automountServiceAccountToken: true });
  assert.equal(admitServiceAccount(on, lookup), 'mounted');
  const off = pod({ automountServiceAccountToken: false });
  assert.equal(admitServiceAccount(off, lookup), 'automount-off');
});

test('a container mounting something at the token path keeps it; a runtime without mounts gets no volume', () => {
  const p = pod({ containers: [{ name: 'a', image: 'busybox', volumeMounts: [{ name: 'mine', mountPath: tokenMountPath }] }], initContainers: [] });
  admitServiceAccount(p, lookup);
  assert.equal(p.spec!.volumes, undefined);
  const h = pod();
  assert.equal(admitServiceAccount(h, { ...lookup, mountsVolumes: false }), 'not-mounted');
  assert.equal(h.spec!.volumes, undefined);
  assert.equal(h.spec!.containers[0]!.volumeMounts, undefined);
});
