// The cluster-join pieces that are plain logic: kubeconfig reading, flag syntax, Node conditions,
// MicroTime, status patches, references, mirror pods.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialsFrom, loadKubeconfig } from '../../src/cluster/kubeconfig.js';
import { nodeConditions, parseNodeLabels, parseTaints } from '../../src/cluster/node-status.js';
import { microTime } from '../../src/cluster/lease.js';
import { statusPatch } from '../../src/cluster/status-sync.js';
import { referencedObjects } from '../../src/cluster/lookup.js';
import { buildMirrorPod, isMirrorPod, nameStaticPod } from '../../src/cluster/mirror.js';
import { encodeQuery } from '../../src/cluster/client.js';
import type { Pod } from '../../src/api/types.js';

describe('kubeconfig', () => {
  it('reads the current context: server, CA data, token', () => {
    const doc = {
      'current-context': 'node',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443/', 'certificate-authority-data': Buffer.from('CA').toString('base64') } }],
      users: [{ name: 'u', user: { token: 'abc' } }],
      contexts: [{ name: 'node', context: { cluster: 'c', user: 'u' } }],
    };
    const c = credentialsFrom(doc, '/x/kubeconfig');
    assert.equal(c.server, 'https://127.0.0.1:6443');
    assert.equal(c.ca?.toString(), 'CA');
    assert.equal(c.token, 'abc');
  });

  it('reads certificate files relative to the kubeconfig, and a token file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'podvisor-kc-'));
    try {
      writeFileSync(join(dir, 'ca.crt'), 'CA');
      writeFileSync(join(dir, 'c.crt'), 'CERT');
      writeFileSync(join(dir, 'c.key'), 'KEY');
      writeFileSync(join(dir, 'tok'), 'tkn\n');
      writeFileSync(
        join(dir, 'kubeconfig'),
        [
          'apiVersion: v1',
          'kind: Config',
          'current-context: n',
          'clusters: [{name: c, cluster: {server: "https://h:1", certificate-authority: ca.crt}}]',
          'users: [{name: u, user: {client-certificate: c.crt, client-key: c.key, tokenFile: tok}}]',
          'contexts: [{name: n, context: {cluster: c, user: u}}]',
        ].join('\n'),
      );
      const c = loadKubeconfig(join(dir, 'kubeconfig'));
      assert.equal(c.ca?.toString(), 'CA');
      assert.equal(c.cert?.toString(), 'CERT');
      assert.equal(c.key?.toString(), 'KEY');
      assert.equal(c.token, 'tkn');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what is wrong with an unusable kubeconfig', () => {
    assert.throws(() => credentialsFrom({ 'current-context': 'x' }, 'k'), /invalid kubeconfig k: context "x" not found/);
    assert.throws(
      () => credentialsFrom({ clusters: [{ name: 'c', cluster: {} }], contexts: [{ name: 'n', context: { cluster: 'c' } }] }, 'k'),
      /cluster has no server/,
    );
    assert.throws(
      () =>
        credentialsFrom(
          {
            clusters: [{ name: 'c', cluster: { server: 'https://h' } }],
            users: [{ name: 'u', user: { exec: { command: 'x' } } }],
            contexts: [{ name: 'n', context: { cluster: 'c', user: 'u' } }],
          },
          'k',
        ),
      /exec and auth-provider credentials are not supported/,
    );
  });
});

describe('node flags and status', () => {
  it('parses --node-labels and --register-with-taints', () => {
    assert.deepEqual(parseNodeLabels('a=1, b.io/x=y,c='), { a: '1', 'b.io/x': 'y', c: '' });
    assert.throws(() => parseNodeLabels('novalue'), /invalid label "novalue": must be key=value/);
    assert.deepEqual(parseTaints('k=v:NoSchedule,only:NoExecute'), [
      { key: 'k', value: 'v', effect: 'NoSchedule' },
      { key: 'only', effect: 'NoExecute' },
    ]);
    assert.throws(() => parseTaints('k=v:Sometimes'), /invalid taint effect: Sometimes/);
    assert.throws(() => parseTaints('k=v'), /invalid taint spec: k=v/);
  });

  it('keeps condition transition times while the status holds; heartbeats move', () => {
    const t0 = Date.UTC(2026, 0, 1);
    const first = nodeConditions(t0, undefined, { ready: true });
    assert.deepEqual(
      first.map((c) => c.type),
      ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'],
    );
    const second = nodeConditions(t0 + 10_000, first, { ready: true });
    const ready2 = second.find((c) => c.type === 'Ready')!;
    assert.equal(ready2.lastTransitionTime, '2026-01-01T00:00:00Z');
    assert.equal(ready2.lastHeartbeatTime, '2026-01-01T00:00:10Z');
    const third = nodeConditions(t0 + 20_000, second, { ready: false, message: 'runtime down' });
    const ready3 = third.find((c) => c.type === 'Ready')!;
    assert.deepEqual(
      [ready3.status, ready3.reason, ready3.message, ready3.lastTransitionTime],
      ['False', 'KubeletNotReady', 'runtime down', '2026-01-01T00:00:20Z'],
    );
  });

  it('writes MicroTime with six fractional digits', () => {
    assert.equal(microTime(Date.UTC(2026, 0, 1, 0, 0, 0, 123)), '2026-01-01T00:00:00.123000Z');
  });

  it('encodes queries for the API server', () => {
    assert.equal(encodeQuery({ fieldSelector: 'spec.nodeName=n1', watch: true, x: undefined }), '?fieldSelector=spec.nodeName%3Dn1&watch=true');
  });
});

describe('status patches, references, mirror pods', () => {
  it('patches with the uid and nulls fields the new status drops', () => {
    const p = statusPatch('u1', { phase: 'Running' }, { phase: 'Pending', reason: 'X', message: 'y' });
    assert.deepEqual(p, { metadata: { uid: 'u1' }, status: { phase: 'Running', reason: null, message: null } });
  });

  const pod: Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'static-uid', annotations: { 'kubernetes.io/config.hash': 'h1' }, labels: { a: 'b' } },
    spec: {
      containers: [
        {
          name: 'c',
          envFrom: [{ configMapRef: { name: 'cm1' } }, { secretRef: { name: 's1' } }],
          env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm2', key: 'k' } } }],
        },
      ],
      volumes: [
        { name: 'v', secret: { secretName: 's2' } },
        { name: 'w', projected: { sources: [{ configMap: { name: 'cm1' } }] } },
      ],
    },
  };

  it('finds every ConfigMap and Secret a pod references, once', () => {
    assert.deepEqual(referencedObjects(pod), { configMaps: ['cm1', 'cm2'], secrets: ['s1', 's2'] });
  });

  it('builds the mirror pod as the kubelet does', () => {
    const named = nameStaticPod(pod, 'Node-1');
    assert.equal(named.metadata!.name, 'p-node-1');
    assert.equal(nameStaticPod(named, 'node-1'), named);
    const m = buildMirrorPod(named, 'node-1', 'node-uid');
    assert.ok(isMirrorPod(m));
    assert.equal(m.metadata!.annotations!['kubernetes.io/config.mirror'], 'h1');
    assert.equal(m.metadata!.uid, undefined);
    assert.deepEqual(m.metadata!.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'node-uid', controller: true }]);
    assert.equal(m.spec!.nodeName, 'node-1');
  });
});
