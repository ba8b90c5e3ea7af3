// A HorizontalPodAutoscaler on a real `podvisor agent` driven by the real kubectl: `kubectl autoscale
// deployment` (autoscaling/v1 from kubectl 1.20, v2 from newer ones), a short scale-down stabilization
// window patched into its behavior, then a Deployment of host-process pods with a CPU request of 20m
// that burn part of a core each (a shell loop, then a sleep) while a file exists: the HPA scales it up to its max of 3 on
// the agent's own pod metrics, and once the file is gone back down to 1 after the window; `kubectl get
// hpa` in upstream's columns, the SuccessfulRescale events in upstream's words, the conditions.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectlPath, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
// A sync period of 5 s (kube-controller-manager's flag) keeps the test short; the algorithm is the same.
const env = useKubectlAgent(skip, ['--horizontal-pod-autoscaler-sync-period', '5s']);

type Api = { kubeconfig: string; dir: string };

async function ok(a: Api, args: string[]): Promise<string> {
  const r = await kubectl(a, args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const deployment = (flag: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: burn}
spec:
  replicas: 1
  selector: {matchLabels: {app: burn}}
  template:
    metadata: {labels: {app: burn}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: main
        image: busybox
        command: [sh, -c, 'while :; do if [ -e ${flag} ]; then i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done; sleep 0.25; else sleep 1; fi; done']
        resources: {requests: {cpu: 20m}}
`;

test('kubectl autoscale: a Deployment scaled up under CPU load and back down after its stabilization window', { skip, timeout: 600_000 }, async (t) => {
  const a = env.api(t);
  const flag = join(env.dir, 'burn');
  writeFileSync(flag, '');
  t.after(() => rmSync(flag, { force: true }));
  const file = join(env.dir, 'burn.yaml');
  writeFileSync(file, deployment(flag));
  await ok(a, ['apply', '-f', file]);
  const out = await ok(a, ['autoscale', 'deployment', 'burn', '--cpu-percent=50', '--min=1', '--max=3']);
  assert.match(out, /horizontalpodautoscaler.autoscaling\/burn autoscaled/);
  // A short scale-down window and one policy of 100 % per 15 s (the stabilization is the behavior's, not the controller's 300 s).
  await ok(a, ['patch', 'hpa', 'burn', '--type=merge', '-p', '{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":5}}}}']);
  const v2 = JSON.parse(await ok(a, ['get', '--raw', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/burn'])) as {
    spec: { behavior: { scaleDown: { stabilizationWindowSeconds: number; policies: unknown[] } }; metrics: unknown[] };
  };
  assert.equal(v2.spec.behavior.scaleDown.stabilizationWindowSeconds, 5);
  assert.deepEqual(v2.spec.behavior.scaleDown.policies, [{ type: 'Percent', value: 100, periodSeconds: 15 }]);
  assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
  // The v1 view of the same object: the target as targetCPUUtilizationPercentage, the behavior in its annotation.
  const v1 = JSON.parse(await ok(a, ['get', '--raw', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/burn'])) as {
    spec: { targetCPUUtilizationPercentage: number };
    metadata: { annotations: Record<string, string> };
  };
  assert.equal(v1.spec.targetCPUUtilizationPercentage, 50);
  assert.match(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/behavior']!, /"stabilizationWindowSeconds":5/);

  await waitFor('scaled up to 3', async () => (await ok(a, ['get', 'deployment', 'burn', '-o', 'jsonpath={.spec.replicas}'])) === '3', 240_000);
  const table = await ok(a, ['get', 'hpa']);
  const [header, row] = table.trim().split('\n');
  assert.match(header!, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/);
  assert.match(row!, /^burn\s+Deployment\/burn\s+cpu: \d+%\/50%\s+1\s+3\s+\d\s+\S+$/);
  let events = await ok(a, ['get', 'events', '--field-selector', 'reason=SuccessfulRescale', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}']);
  assert.match(events, /New size: [23]; reason: cpu resource utilization \(percentage of request\) above target/);
  const conditions = await ok(a, ['get', 'hpa', 'burn', '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason}{"\\n"}{end}']);
  assert.match(conditions, /^AbleToScale=True\//m);
  assert.match(conditions, /^ScalingActive=True\/ValidMetricFound$/m);
  assert.match(conditions, /^ScalingLimited=/m);

  rmSync(flag);
  await waitFor('scaled back down to 1', async () => (await ok(a, ['get', 'deployment', 'burn', '-o', 'jsonpath={.spec.replicas}'])) === '1', 240_000);
  events = await ok(a, ['get', 'events', '--field-selector', 'reason=SuccessfulRescale', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}']);
  assert.match(events, /New size: 1; reason: All metrics below target/);
  const status = JSON.parse(await ok(a, ['get', 'hpa.v2.autoscaling', 'burn', '-o', 'json'])) as { status: Record<string, unknown> };
  assert.ok(status.status.lastScaleTime);
  await ok(a, ['delete', 'hpa/burn', 'deployment/burn']);
});
