// Validation of StorageClasses, PersistentVolumes and PersistentVolumeClaims in the API server's words
// (the messages as kube-apiserver answers them for the same objects; ReadWriteOncePod is newer than
// the 1.20 server they were compared with).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFieldError } from '../../src/api/field-errors.js';
import {
  defaultPersistentVolume,
  validatePersistentVolume,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimUpdate,
  validatePersistentVolumeUpdate,
  validateStorageClass,
  validateStorageClassUpdate,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../../src/api/validation/storage.js';

const lines = (errs: ReturnType<typeof validatePersistentVolume>) => errs.map(formatFieldError).sort();

test('PersistentVolume: access modes, capacity, a volume source, paths, class, mode, node affinity', () => {
  assert.deepEqual(lines(validatePersistentVolume({ metadata: { name: 'bad' }, spec: { capacity: { storage: '0' }, accessModes: ['Foo'] } })), [
    'spec.accessModes: Unsupported value: "Foo": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
    'spec: Required value: must specify a volume type',
  ]);
  const pv2: PersistentVolume = {
    metadata: { name: 'bad2' },
    spec: {
      capacity: { storage: '1Gi', cpu: '1' },
      accessModes: ['ReadWriteOncePod', 'ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Foo',
      storageClassName: 'A_B',
      volumeMode: 'Foo',
      hostPath: { path: '/a/../b' },
      local: { path: '/x' },
    },
  };
  const got = lines(validatePersistentVolume(pv2));
  for (const want of [
    'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
    'spec.capacity: Unsupported value: core.ResourceList{"cpu":resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1", Format:"DecimalSI"}, "storage":resource.Quantity{i:resource.int64Amount{value:1073741824, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1Gi", Format:"BinarySI"}}: supported values: "storage"',
    'spec.persistentVolumeReclaimPolicy: Unsupported value: "Foo": supported values: "Delete", "Recycle", "Retain"',
    'spec.hostPath.path: Invalid value: "/a/../b": must not contain \'..\'',
    'spec.local: Forbidden: may not specify more than 1 volume type',
    'spec.volumeMode: Unsupported value: "Foo": supported values: "Block", "Filesystem"',
  ]) {
    assert.ok(got.includes(want), `${want}\nnot in\n${got.join('\n')}`);
  }
  assert.ok(got.some((l) => l.startsWith('spec.storageClassName: Invalid value: "A_B": a lowercase RFC 1123 subdomain')));
  assert.deepEqual(
    lines(
      validatePersistentVolume({
        metadata: { name: 'bad3' },
        spec: { accessModes: ['ReadWriteOnce'], local: { path: '' }, nodeAffinity: { required: { nodeSelectorTerms: [] } } },
      }),
    ),
    [
      'spec.capacity: Required value',
      'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"',
      'spec.local.path: Required value',
      'spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term',
    ],
  );
  const local = lines(
    validatePersistentVolume({ metadata: { name: 'l' }, spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, local: { path: '/x' } } }),
  );
  assert.deepEqual(local, ['spec.nodeAffinity: Required value: Local volume requires node affinity']);
  // Defaults: Retain, Filesystem, a hostPath type of "", phase Pending.
  const d = defaultPersistentVolume({ metadata: { name: 'p' }, spec: { hostPath: { path: '/tmp/x' } } });
  assert.deepEqual(
    [d.spec?.persistentVolumeReclaimPolicy, d.spec?.volumeMode, d.spec?.hostPath?.type, d.status?.phase],
    ['Retain', 'Filesystem', '', 'Pending'],
  );
  // The source is immutable.
  const ok: PersistentVolume = {
    metadata: { name: 'ok' },
    spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, hostPath: { path: '/tmp/x' } },
  };
  assert.deepEqual(lines(validatePersistentVolumeUpdate({ ...ok, spec: { ...ok.spec, hostPath: { path: '/tmp/y' } } }, ok)), [
    'spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation',
  ]);
});

test('PersistentVolumeClaim: access modes and the storage request; the spec immutable but for a bound claim growing', () => {
  assert.deepEqual(lines(validatePersistentVolumeClaim({ metadata: { name: 'bad', namespace: 'default' }, spec: {} })), [
    'spec.accessModes: Required value: at least 1 access mode is required',
    'spec.resources[storage]: Required value',
  ]);
  const got = lines(
    validatePersistentVolumeClaim({
      metadata: { name: 'bad2', namespace: 'default' },
      spec: { accessModes: ['Foo'], storageClassName: 'A_B', volumeMode: 'Foo', resources: { requests: { storage: '-1' } } },
    }),
  );
  assert.ok(got.includes('spec.resources[storage]: Invalid value: "-1": must be greater than zero'), got.join('\n'));
  assert.ok(got.includes('spec.volumeMode: Unsupported value: "Foo": supported values: "Block", "Filesystem"'));
  const claim: PersistentVolumeClaim = {
    metadata: { name: 'ok', namespace: 'default' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    status: { phase: 'Pending' },
  };
  const immutable = 'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims';
  assert.deepEqual(lines(validatePersistentVolumeClaimUpdate({ ...claim, spec: { ...claim.spec, accessModes: ['ReadWriteMany'] } }, claim)), [immutable]);
  const grown = { ...claim, spec: { ...claim.spec, resources: { requests: { storage: '2Gi' } } } };
  assert.deepEqual(lines(validatePersistentVolumeClaimUpdate(grown, claim)), [immutable]);
  const bound = { ...claim, spec: { ...claim.spec, volumeName: 'pv' }, status: { phase: 'Bound' } };
  assert.deepEqual(lines(validatePersistentVolumeClaimUpdate({ ...grown, spec: { ...grown.spec, volumeName: 'pv' } }, bound)), []);
  const shrunk = { ...bound, spec: { ...bound.spec, resources: { requests: { storage: '512Mi' } } } };
  assert.deepEqual(lines(validatePersistentVolumeClaimUpdate(shrunk, bound)), [
    'spec.resources.requests[storage]: Forbidden: field can not be less than previous value',
  ]);
  // The binder sets the volume of an unbound claim.
  assert.deepEqual(lines(validatePersistentVolumeClaimUpdate({ ...claim, spec: { ...claim.spec, volumeName: 'pv' } }, claim)), []);
});

test('StorageClass: provisioner, parameters, reclaim policy, binding mode; immutable but for annotations', () => {
  assert.deepEqual(
    lines(
      validateStorageClass({
        metadata: { name: 'bad' },
        provisioner: 'Foo Bar',
        reclaimPolicy: 'Recycle',
        volumeBindingMode: 'Later',
        parameters: { '': 'x' },
      }),
    ),
    [
      'parameters: Invalid value: "": field can not be empty.',
      "provisioner: Invalid value: \"Foo Bar\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
      'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
    ],
  );
  assert.deepEqual(lines(validateStorageClass({ metadata: { name: 'none' }, volumeBindingMode: 'Immediate' } as StorageClass)), [
    'provisioner: Required value',
  ]);
  const old: StorageClass = { metadata: { name: 'ok' }, provisioner: 'a.b/c', parameters: { x: 'y' }, reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' };
  assert.deepEqual(
    lines(
      validateStorageClassUpdate(
        { ...old, provisioner: 'd.e/f', parameters: { x: 'z' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' },
        old,
      ),
    ),
    [
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ],
  );
});
