// The workload kinds through the official client libraries against a real `podvisor agent`:
// @kubernetes/client-node (AppsV1Api: a Deployment created, scaled through its scale subresource,
// rolled to a new template; BatchV1Api: a Job to Complete) and Debian's python3-kubernetes (the same
// kinds listed and read, a StatefulSet created and scaled at once).

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';

function findPython(): string | undefined {
  for (const p of [process.env.PYTHON, '/usr/bin/python3', 'python3']) {
    if (!p) continue;
    try {
      execFileSync(p, ['-c', 'import kubernetes'], { stdio: 'ignore' });
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}
const python = findPython();

const sleeper = (app: string, value: string): k8s.V1PodTemplateSpec => ({
  metadata: { labels: { app } },
  spec: {
    terminationGracePeriodSeconds: 1,
    containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'], env: [{ name: 'VERSION', value }] }],
  },
});

describe('workload kinds through the official clients', () => {
  let dir: { path: string; remove(): Promise<void> };
  let root: string;
  let agent: CliProcess | undefined;
  let kc: k8s.KubeConfig;
  let apps: k8s.AppsV1Api;
  let batch: k8s.BatchV1Api;
  let core: k8s.CoreV1Api;

  before(async () => {
    dir = await tempDir();
    root = join(dir.path, 'root');
    agent = startCli(['agent', '--root-dir', root, '--port', '0', '--address', '127.0.0.1']);
    await agent.waitFor('stderr', /podvisor agent started/);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(join(root, 'kubeconfig'));
    apps = kc.makeApiClient(k8s.AppsV1Api);
    batch = kc.makeApiClient(k8s.BatchV1Api);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });

  after(async () => {
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent?.exited;
    await dir?.remove();
  });

  const available = (name: string, replicas: number) =>
    waitFor(
      `deployment ${name} to have ${replicas} updated, available replicas`,
      async () => {
        const d = await apps.readNamespacedDeploymentStatus({ namespace: 'default', name });
        const s = d.status;
        return (
          s?.observedGeneration === d.metadata?.generation &&
          s?.updatedReplicas === replicas &&
          s?.availableReplicas === replicas &&
          (s?.replicas ?? 0) === replicas
        );
      },
      120_000,
    );

  test('client-node: a Deployment created, scaled through /scale, and rolled to a new template', async () => {
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: sleeper('web', 'one') } },
    });
    await available('web', 2);

    const scale = await apps.readNamespacedDeploymentScale({ namespace: 'default', name: 'web' });
    assert.equal(scale.spec?.replicas, 2);
    await apps.replaceNamespacedDeploymentScale({ namespace: 'default', name: 'web', body: { ...scale, spec: { replicas: 3 } } });
    await available('web', 3);

    const d = await apps.readNamespacedDeployment({ namespace: 'default', name: 'web' });
    d.spec!.template = sleeper('web', 'two');
    await apps.replaceNamespacedDeployment({ namespace: 'default', name: 'web', body: d });
    await available('web', 3);
    const sets = await apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=web' });
    const byReplicas = sets.items.map((rs) => `${rs.metadata?.annotations?.['deployment.kubernetes.io/revision']}:${rs.spec?.replicas}`).sort();
    assert.deepEqual(byReplicas, ['1:0', '2:3'], 'the old ReplicaSet scaled to 0, the new one to 3');
    await waitFor(
      'only the new template pods to remain',
      async () =>
        (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' })).items.every((p) => p.spec?.containers[0]?.env?.[0]?.value === 'two'),
      120_000,
    );
  });

  test('client-node: a Job runs to Complete with its counts', async () => {
    await batch.createNamespacedJob({
      namespace: 'default',
      body: {
        metadata: { name: 'once' },
        spec: {
          completions: 2,
          parallelism: 2,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'echo done'] }] } },
        },
      },
    });
    const job = await waitFor(
      'the Job to be Complete',
      async () => {
        const j = await batch.readNamespacedJobStatus({ namespace: 'default', name: 'once' });
        return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
      },
      120_000,
    );
    assert.equal(job.status?.succeeded, 2);
    assert.ok(job.status?.completionTime);
  });

  test(
    'python3-kubernetes: workloads listed and read; a StatefulSet created and scaled at once',
    { skip: python ? false : 'python3-kubernetes is not installed' },
    async () => {
      const script = join(dir.path, 'workloads.py');
      writeFileSync(
        script,
        `import sys, time
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
apps = client.AppsV1Api()
batch = client.BatchV1Api()
print("deployments", ",".join(sorted(d.metadata.name for d in apps.list_namespaced_deployment("default").items)))
print("jobs", ",".join(sorted(j.metadata.name for j in batch.list_namespaced_job("default").items)))
d = apps.read_namespaced_deployment("web", "default")
print("web replicas", d.spec.replicas, d.status.available_replicas)
sts = client.V1StatefulSet(
    metadata=client.V1ObjectMeta(name="db"),
    spec=client.V1StatefulSetSpec(
        service_name="db", replicas=1,
        selector=client.V1LabelSelector(match_labels={"app": "db"}),
        template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(labels={"app": "db"}),
            spec=client.V1PodSpec(termination_grace_period_seconds=1, containers=[
                client.V1Container(name="db", image="busybox", command=["sleep", "3600"])]))))
apps.create_namespaced_stateful_set("default", sts)
# Scaled at once, while the controller writes the new set's first status.
apps.patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 2}})
deadline = time.time() + 120
while time.time() < deadline:
    s = apps.read_namespaced_stateful_set_status("db", "default").status
    if s is not None and s.ready_replicas == 2:
        break
    time.sleep(0.5)
print("db ready", s and s.ready_replicas)
print("db pods", ",".join(sorted(p.metadata.name for p in client.CoreV1Api().list_namespaced_pod("default", label_selector="app=db").items)))
`,
      );
      const out = await new Promise<string>((resolve, reject) =>
        execFile(python!, [script, join(root, 'kubeconfig')], { timeout: 180_000 }, (err, so, se) =>
          err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so),
        ),
      );
      assert.match(out, /^deployments web$/m);
      assert.match(out, /^jobs once$/m);
      assert.match(out, /^web replicas 3 3$/m);
      assert.match(out, /^db ready 2$/m);
      assert.match(out, /^db pods db-0,db-1$/m);
    },
  );
});
