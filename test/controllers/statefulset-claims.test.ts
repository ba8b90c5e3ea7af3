// A StatefulSet's claims from its volumeClaimTemplates (names, labels from the selector) and the
// owner references persistentVolumeClaimRetentionPolicy gives them (updateClaimOwnerRefForSetAndPod).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod, StatefulSet } from '../../src/api/types.js';
import { claimsForOrdinal, retentionOwnerRefs } from '../../src/controllers/statefulset-claims.js';

const set = (whenDeleted: string, whenScaled: string): StatefulSet => ({
  metadata: { name: 'web', namespace: 'shop', uid: 'set-uid' },
  spec: {
    serviceName: 'web',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled },
    volumeClaimTemplates: [
      { metadata: { name: 'data', labels: { tier: 'db' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      { metadata: { name: 'logs' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    ],
  },
});

const pod: Pod = { metadata: { name: 'web-2', namespace: 'shop', uid: 'pod-uid' }, spec: { containers: [] } };

test('claims of an ordinal: <template>-<set>-<ordinal>, in the set namespace, with the selector labels', () => {
  const claims = claimsForOrdinal(set('Retain', 'Retain'), 2);
  assert.deepEqual(
    claims.map((c) => [c.metadata?.name, c.metadata?.namespace, c.metadata?.labels]),
    [
      ['data-web-2', 'shop', { tier: 'db', app: 'web' }],
      ['logs-web-2', 'shop', { app: 'web' }],
    ],
  );
});

test('retention policy: owners by whenDeleted and whenScaled', () => {
  const owners = (whenDeleted: string, whenScaled: string, condemned: boolean) =>
    retentionOwnerRefs(claimsForOrdinal(set(whenDeleted, whenScaled), 2)[0]!, set(whenDeleted, whenScaled), pod, condemned).map((r) => `${r.kind}/${r.name}`);
  assert.deepEqual(owners('Retain', 'Retain', true), []);
  assert.deepEqual(owners('Delete', 'Retain', false), ['StatefulSet/web']);
  assert.deepEqual(owners('Delete', 'Retain', true), ['StatefulSet/web']);
  assert.deepEqual(owners('Retain', 'Delete', false), []);
  assert.deepEqual(owners('Retain', 'Delete', true), ['Pod/web-2']);
  assert.deepEqual(owners('Delete', 'Delete', true), ['Pod/web-2']);
  assert.deepEqual(owners('Delete', 'Delete', false), ['StatefulSet/web']);
  // Owners of another kind are kept; a stale reference to the pod is replaced.
  const claim = claimsForOrdinal(set('Retain', 'Retain'), 2)[0]!;
  claim.metadata!.ownerReferences = [
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'cm' },
    { apiVersion: 'v1', kind: 'Pod', name: 'web-2', uid: 'old' },
  ];
  assert.deepEqual(
    retentionOwnerRefs(claim, set('Retain', 'Retain'), pod, true).map((r) => r.uid),
    ['cm'],
  );
});
