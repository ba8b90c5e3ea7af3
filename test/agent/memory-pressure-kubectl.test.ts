// A real `podvisor agent --eviction-hard memory.available<100%` (a threshold every node crosses) read
// by the real kubectl: the Node has MemoryPressure True (KubeletHasInsufficientMemory) and the
// node.kubernetes.io/memory-pressure:NoSchedule taint, and the scheduler keeps a pod that does not
// tolerate it Pending with kube-scheduler's message, while one that tolerates it is bound.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip, ['--eviction-hard', 'memory.available<100%']);

const pod = (name: string, tolerations: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 1
${tolerations}  containers: [{name: main, image: busybox, command: [sleep, "300"]}]
`;

test('memory pressure: the condition, its taint, and the scheduler honouring it', { skip }, async (t) => {
  const a = env.api(t);
  const node = (await kubectl(a, ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout;
  await waitFor('MemoryPressure True and its taint', async () => {
    const r = await kubectl(a, [
      'get',
      'node',
      node,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="MemoryPressure")].status}/{.status.conditions[?(@.type=="MemoryPressure")].reason} {.spec.taints[*].key}',
    ]);
    return r.stdout === 'True/KubeletHasInsufficientMemory node.kubernetes.io/memory-pressure';
  });
  let r = await kubectl(a, ['apply', '-f', '-'], pod('plain', ''));
  assert.equal(r.code, 0, r.stderr);
  r = await kubectl(
    a,
    ['apply', '-f', '-'],
    pod('tolerant', '  tolerations: [{key: node.kubernetes.io/memory-pressure, operator: Exists, effect: NoSchedule}]\n'),
  );
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the plain pod Unschedulable', async () => {
    const s = await kubectl(a, ['get', 'pod', 'plain', '-o', 'jsonpath={.status.phase} {.status.conditions[?(@.type=="PodScheduled")].message}']);
    return s.stdout.startsWith('Pending 0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/memory-pressure: }.');
  });
  await waitFor('the tolerant pod bound', async () => (await kubectl(a, ['get', 'pod', 'tolerant', '-o', 'jsonpath={.spec.nodeName}'])).stdout === node);
  await kubectl(a, ['delete', 'pod', 'plain', 'tolerant', '--wait=false']);
});
