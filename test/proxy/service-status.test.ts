// The Service status subresource on a real agent with @kubernetes/client-node (what `kubectl patch
// --subresource=status` sends on newer kubectl): a LoadBalancer is published on the host's address
// when created, a status patch names another ingress, which a later change of the spec keeps and a
// change of type away from LoadBalancer clears; GET of services/NAME/status answers the object.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startCli, tempDir } from '../fixtures/cli/cli-process.js';

/** A client-node model as plain data (its classes compare unequal to literals). */
const plain = (x: unknown): unknown => (x === undefined ? undefined : JSON.parse(JSON.stringify(x)));

test('services/status: get, JSON and merge patches of the ingress, kept across spec changes', async (t) => {
  const dir = await tempDir();
  const agent = startCli(['agent', '--root-dir', join(dir.path, 'root'), '--port', '0', '--address', '127.0.0.1']);
  t.after(async () => {
    if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent.exited;
    await dir.remove();
  });
  await agent.waitFor('stderr', /podvisor agent started/);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(join(dir.path, 'root', 'kubeconfig'));
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const namespace = 'default';
  const name = 'lb';

  const created = await core.createNamespacedService({
    namespace,
    body: { metadata: { name }, spec: { type: 'LoadBalancer', selector: { app: 'lb' }, ports: [{ port: 18551, targetPort: 8080 }] } },
  });
  assert.deepEqual(plain(created.status?.loadBalancer?.ingress), [{ ip: '127.0.0.1' }]);
  assert.equal((await core.readNamespacedServiceStatus({ name, namespace })).status?.loadBalancer?.ingress?.[0]?.ip, '127.0.0.1');

  // A JSON patch of the status alone: the spec is not touched by it.
  const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
  const patched = await core.patchNamespacedServiceStatus(
    { name, namespace, body: [{ op: 'replace', path: '/status/loadBalancer', value: { ingress: [{ ip: '127.0.0.2' }] } }] },
    jsonPatch,
  );
  assert.deepEqual(plain(patched.status?.loadBalancer?.ingress), [{ ip: '127.0.0.2' }]);
  assert.equal(patched.spec?.ports?.[0]?.port, 18551);

  // A change of the spec (through the object, not its status) keeps the written ingress; a status sent with it is ignored.
  const current = await core.readNamespacedService({ name, namespace });
  const relabelled = await core.replaceNamespacedService({
    name,
    namespace,
    body: { ...current, metadata: { ...current.metadata, labels: { tier: 'edge' } }, status: { loadBalancer: { ingress: [{ ip: '127.0.0.9' }] } } },
  });
  assert.deepEqual(plain(relabelled.status?.loadBalancer?.ingress), [{ ip: '127.0.0.2' }]);

  // A merge patch through the status subresource; then the type changed away from LoadBalancer: no ingress.
  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const merged = await core.patchNamespacedServiceStatus(
    { name, namespace, body: { status: { loadBalancer: { ingress: [{ hostname: 'lb.example' }] } } } },
    mergePatch,
  );
  assert.deepEqual(plain(merged.status?.loadBalancer?.ingress), [{ hostname: 'lb.example' }]);
  const asClusterIP = await core.patchNamespacedService(
    { name, namespace, body: { spec: { type: 'ClusterIP', externalTrafficPolicy: null, ports: [{ port: 18551, targetPort: 8080, nodePort: null }] } } },
    mergePatch,
  );
  assert.equal(asClusterIP.spec?.type, 'ClusterIP');
  assert.deepEqual(plain(asClusterIP.status), { loadBalancer: {} });
});
