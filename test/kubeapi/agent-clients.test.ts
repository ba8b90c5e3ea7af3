// The official client libraries against a real `podvisor agent`, over TLS with the token of the
// kubeconfig the agent writes: @kubernetes/client-node (create, list, informer-style list+watch, log
// follow, exec with its exit status) and Debian's python3-kubernetes (list, watch, log, exec); both
// clients' typed APIs for a ServiceAccount, a Role and RoleBinding, an HPA, a NetworkPolicy and a PVC.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from './harness.js';

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

function collect(): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({
    write(chunk, _enc, cb) {
      text += chunk;
      cb();
    },
  });
  return Object.assign(w, { text: () => text });
}

const shellPod = (name: string, script: string): k8s.V1Pod => ({
  metadata: { name, labels: { app: name } },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'busybox', command: ['/bin/sh', '-c', script] }] },
});

describe('official clients against a real agent', () => {
  let dir: { path: string; remove(): Promise<void> };
  let root: string;
  let agent: CliProcess | undefined;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let ticker: string;

  before(async () => {
    dir = await tempDir();
    root = join(dir.path, 'root');
    ticker = join(dir.path, 'tick');
    agent = startCli(['agent', '--root-dir', root, '--port', '0', '--address', '127.0.0.1']);
    await agent.waitFor('stderr', /podvisor agent started/);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(join(root, 'kubeconfig'));
    core = kc.makeApiClient(k8s.CoreV1Api);
    // "web" logs three lines, then "four" once the ticker file appears.
    await core.createNamespacedPod({
      namespace: 'default',
      body: shellPod('web', `echo one; echo two; echo three; while true; do if [ -e ${ticker} ]; then rm -f ${ticker}; echo four; fi; sleep 0.1; done`),
    });
    await waitFor('web running', async () => (await core.readNamespacedPod({ namespace: 'default', name: 'web' })).status?.phase === 'Running', 60_000);
  });

  after(async () => {
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent?.exited;
    await dir?.remove();
  });

  test('client-node lists pods; an unknown one is a 404', async () => {
    const list = await core.listNamespacedPod({ namespace: 'default' });
    assert.deepEqual(
      list.items.map((p) => p.metadata?.name),
      ['web'],
    );
    assert.equal(list.items[0]!.status?.phase, 'Running');
    await assert.rejects(core.readNamespacedPod({ namespace: 'default', name: 'nope' }), (err: { code?: number }) => err.code === 404);
  });

  test('client-node informer: list, then watch a pod added and deleted', async () => {
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () => core.listNamespacedPod({ namespace: 'default' }));
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
    informer.on('update', (p) => seen.push(`update ${p.metadata?.name}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
    await informer.start();
    try {
      await waitFor('the listed pod', () => seen.includes('add web'));
      await core.createNamespacedPod({ namespace: 'default', body: shellPod('inf', 'exec sleep 300') });
      await waitFor('the added pod', () => seen.includes('add inf'));
      await waitFor('its status updates', () => seen.includes('update inf'), 60_000);
      await core.deleteNamespacedPod({ namespace: 'default', name: 'inf' });
      await waitFor('the deleted pod', () => seen.includes('delete inf'), 60_000);
    } finally {
      await informer.stop();
    }
  });

  test('client-node log follow sees a new line as it is written', async () => {
    const out = collect();
    const ctl = await new k8s.Log(kc).log('default', 'web', 'app', out, { follow: true, tailLines: 1 });
    try {
      await waitFor('the tail line', () => out.text() === 'three\n', 30_000);
      writeFileSync(ticker, '');
      await waitFor('the followed line', () => out.text() === 'three\nfour\n', 30_000);
    } finally {
      ctl.abort();
    }
  });

  test('client-node exec over WebSocket: stdout, stderr, stdin, exit status', async () => {
    const stdout = collect();
    const stderr = collect();
    const stdin = new PassThrough();
    const status = await new Promise<k8s.V1Status>((resolve) => {
      void new k8s.Exec(kc).exec('default', 'web', 'app', ['sh', '-c', 'cat; echo err >&2; exit 3'], stdout, stderr, stdin, false, (s) => resolve(s));
      stdin.end('from stdin\n');
    });
    assert.equal(stdout.text(), 'from stdin\n');
    assert.equal(stderr.text(), 'err\n');
    assert.equal(status.status, 'Failure');
    assert.equal(status.reason, 'NonZeroExitCode');
    assert.equal(status.details?.causes?.[0]?.message, '3');
  });

  test('client-node typed APIs: a ServiceAccount, a Role and RoleBinding, an HPA v2, a NetworkPolicy, a PVC', async () => {
    const namespace = 'default';
    const sa = await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'node-robot' } } });
    assert.equal(sa.metadata?.name, 'node-robot');
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: { metadata: { name: 'node-pods' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
    });
    const rb = await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'node-robot-pods' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'node-pods' },
        subjects: [{ kind: 'ServiceAccount', name: 'node-robot', namespace }],
      },
    });
    assert.equal(rb.roleRef.name, 'node-pods');
    const review = await kc.makeApiClient(k8s.AuthorizationV1Api).createSubjectAccessReview({
      body: { spec: { user: 'system:serviceaccount:default:node-robot', resourceAttributes: { namespace, verb: 'list', resource: 'pods' } } },
    });
    assert.equal(review.status?.allowed, true);
    const hpa = await kc.makeApiClient(k8s.AutoscalingV2Api).createNamespacedHorizontalPodAutoscaler({
      namespace,
      body: {
        metadata: { name: 'node-hpa' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'absent' },
          maxReplicas: 3,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        },
      },
    });
    assert.equal(hpa.spec?.minReplicas, 1);
    const np = await kc.makeApiClient(k8s.NetworkingV1Api).createNamespacedNetworkPolicy({
      namespace,
      body: { metadata: { name: 'node-deny' }, spec: { podSelector: { matchLabels: { app: 'none' } } } },
    });
    assert.deepEqual(np.spec?.policyTypes, ['Ingress']);
    const pvc = await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: { metadata: { name: 'node-claim' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
    });
    assert.equal(pvc.spec?.storageClassName, 'standard');
    assert.equal(pvc.status?.phase, 'Pending');
    assert.deepEqual(
      (await rbac.listNamespacedRoleBinding({ namespace })).items.map((b) => b.metadata?.name),
      ['node-robot-pods'],
    );
  });

  test('python3-kubernetes: list, watch, log and exec', { skip: python ? false : 'python3-kubernetes is not installed' }, async () => {
    const script = join(dir.path, 'client.py');
    writeFileSync(
      script,
      [
        'import json, sys',
        'from kubernetes import client, config, watch',
        'from kubernetes.stream import stream',
        'config.load_kube_config(config_file=sys.argv[1])',
        'v1 = client.CoreV1Api()',
        'out = {}',
        "out['list'] = [p.metadata.name for p in v1.list_namespaced_pod('default').items]",
        "out['watch'] = [(e['type'], e['object'].metadata.name) for e in watch.Watch().stream(v1.list_namespaced_pod, 'default', timeout_seconds=1)]",
        "out['log'] = v1.read_namespaced_pod_log('web', 'default', container='app', tail_lines=2)",
        "r = stream(v1.connect_get_namespaced_pod_exec, 'web', 'default', command=['sh', '-c', 'echo hi; exit 5'], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)",
        'r.run_forever(timeout=20)',
        "out['exec'] = r.read_stdout()",
        "out['rc'] = r.returncode",
        'print(json.dumps(out))',
      ].join('\n'),
    );
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(python!, [script, join(root, 'kubeconfig')], { timeout: 60_000 }, (err, so, se) =>
        err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so),
      ),
    );
    const out = JSON.parse(stdout) as { list: string[]; watch: Array<[string, string]>; log: string; rc: number; exec: string };
    assert.deepEqual(out.list, ['web']);
    assert.deepEqual(out.watch, [['ADDED', 'web']]);
    assert.match(out.log, /^(two\nthree|three\nfour)\n$/);
    assert.equal(out.exec, 'hi\n');
    assert.equal(out.rc, 5);
  });

  test(
    'python3-kubernetes typed APIs: a ServiceAccount, a Role and RoleBinding, an HPA, a NetworkPolicy, a PVC',
    { skip: python ? false : 'python3-kubernetes is not installed' },
    async () => {
      const script = join(dir.path, 'kinds.py');
      writeFileSync(
        script,
        [
          'import json, sys',
          'from kubernetes import client, config',
          'config.load_kube_config(config_file=sys.argv[1])',
          "ns = 'default'",
          'out = {}',
          "out['sa'] = client.CoreV1Api().create_namespaced_service_account(ns, {'metadata': {'name': 'py-robot'}}).metadata.name",
          'rbac = client.RbacAuthorizationV1Api()',
          "rbac.create_namespaced_role(ns, {'metadata': {'name': 'py-pods'}, 'rules': [{'apiGroups': [''], 'resources': ['pods'], 'verbs': ['list']}]})",
          "rb = rbac.create_namespaced_role_binding(ns, {'metadata': {'name': 'py-robot-pods'}, 'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', 'name': 'py-pods'}, 'subjects': [{'kind': 'ServiceAccount', 'name': 'py-robot', 'namespace': ns}]})",
          "out['rb'] = [rb.role_ref.name, rb.subjects[0].name]",
          "hpa = client.AutoscalingV1Api().create_namespaced_horizontal_pod_autoscaler(ns, {'metadata': {'name': 'py-hpa'}, 'spec': {'scaleTargetRef': {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'absent'}, 'maxReplicas': 2, 'targetCPUUtilizationPercentage': 60}})",
          "out['hpa'] = [hpa.spec.min_replicas, hpa.spec.target_cpu_utilization_percentage]",
          "np = client.NetworkingV1Api().create_namespaced_network_policy(ns, {'metadata': {'name': 'py-deny'}, 'spec': {'podSelector': {}, 'policyTypes': ['Ingress', 'Egress']}})",
          "out['np'] = np.spec.policy_types",
          "pvc = client.CoreV1Api().create_namespaced_persistent_volume_claim(ns, {'metadata': {'name': 'py-claim'}, 'spec': {'accessModes': ['ReadWriteOnce'], 'resources': {'requests': {'storage': '1Mi'}}}})",
          "out['pvc'] = [pvc.spec.storage_class_name, pvc.status.phase]",
          "out['listed'] = sorted(p.metadata.name for p in client.NetworkingV1Api().list_namespaced_network_policy(ns).items)",
          'print(json.dumps(out))',
        ].join('\n'),
      );
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(python!, [script, join(root, 'kubeconfig')], { timeout: 60_000 }, (err, so, se) =>
          err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so),
        ),
      );
      const out = JSON.parse(stdout) as Record<string, unknown>;
      assert.equal(out.sa, 'py-robot');
      assert.deepEqual(out.rb, ['py-pods', 'py-robot']);
      assert.deepEqual(out.hpa, [1, 60]);
      assert.deepEqual(out.np, ['Ingress', 'Egress']);
      assert.deepEqual(out.pvc, ['standard', 'Pending']);
      assert.ok((out.listed as string[]).includes('py-deny'));
    },
  );
});
