// The agent's defaults against a real kube-apiserver's: the same manifests created with kubectl in
// both, the stored objects compared kind by kind. The kube-apiserver here is 1.20 (kube-control-plane),
// the agent reports 1.30: the defaults added between them are listed below with the release that
// added them (read from the v1.30 source, pkg/apis/*/v1/defaults.go, the types' `+default` tags and
// the registries' strategies), checked on the agent's objects, and taken out before the comparison.
// What each server assigns (uids, ClusterIPs from its own range, NodePorts, the pod's node) is not compared.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ControlPlane, skipReason } from '../cluster/control-plane.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectl132Path, kubectlPath, runKubectl } from '../kubeapi/harness.js';

const skip = skipReason() ?? (kubectlPath ? false : 'kubectl is not installed');
const env = useKubectlAgent(skip);
let kcp: ControlPlane | undefined;

before(async () => {
  if (skip) return;
  kcp = new ControlPlane();
  await kcp.start();
});
after(async () => {
  await kcp?.destroy();
});

type Obj = Record<string, any>;

const template = (app: string, spec: Obj) => ({ metadata: { labels: { app } }, spec });
const selector = (app: string) => ({ matchLabels: { app } });

/** A pod spec reaching every defaulter a template has: probes, handlers, env sources, ports, volumes of each kind. */
const richSpec = {
  initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['true'] }],
  containers: [
    {
      name: 'app',
      image: 'busybox',
      command: ['sleep', '3600'],
      ports: [
        { containerPort: 8080, name: 'http' },
        { containerPort: 53, protocol: 'UDP' },
      ],
      env: [
        { name: 'A', value: 'b' },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
      ],
      resources: { limits: { cpu: '0.1', memory: '64Mi' } },
      readinessProbe: { exec: { command: ['true'] } },
      livenessProbe: { httpGet: { port: 'http' } },
      startupProbe: { tcpSocket: { port: 8080 } },
      lifecycle: { preStop: { httpGet: { port: 8080 } }, postStart: { exec: { command: ['true'] } } },
      volumeMounts: ['cfg', 'sec', 'tmp', 'dapi', 'proj', 'host'].map((name) => ({ name, mountPath: `/${name}` })),
    },
  ],
  volumes: [
    { name: 'cfg', configMap: { name: 'settings' } },
    { name: 'sec', secret: { secretName: 'creds' } },
    { name: 'tmp', emptyDir: {} },
    { name: 'dapi', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
    {
      name: 'proj',
      projected: {
        sources: [
          { configMap: { name: 'settings' } },
          { secret: { name: 'creds' } },
          { downwardAPI: { items: [{ path: 'mem', resourceFieldRef: { containerName: 'app', resource: 'limits.memory' } }] } },
        ],
      },
    },
    { name: 'host', hostPath: { path: '/tmp' } },
  ],
  tolerations: [{ key: 'k', operator: 'Exists' }],
};

/** Per kind, the manifests created in both. */
const manifests: Obj[] = [
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'plain' },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'busybox',
          command: ['sleep', '3600'],
          ports: [{ containerPort: 8080 }],
          resources: { limits: { cpu: '100m' } },
          readinessProbe: { httpGet: { path: '/', port: 8080 } },
        },
      ],
    },
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { a: 'b' } },
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'rich' }, spec: { selector: selector('rich'), template: template('rich', richSpec) } },
  {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'rs' },
    spec: { selector: selector('rs'), template: template('rs', { containers: [{ name: 'c', image: 'busybox' }] }) },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'ss' },
    spec: {
      serviceName: 'ss',
      selector: selector('ss'),
      template: template('ss', { containers: [{ name: 'c', image: 'busybox' }] }),
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'ds' },
    spec: { selector: selector('ds'), template: template('ds', { containers: [{ name: 'c', image: 'busybox' }] }) },
  },
  {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'job' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  },
  {
    apiVersion: 'batch/v1beta1',
    kind: 'CronJob',
    metadata: { name: 'cron' },
    spec: {
      schedule: '*/5 * * * *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } },
    },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'cluster' }, spec: { selector: { a: 'b' }, ports: [{ port: 80 }] } },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'nodeport' },
    spec: {
      type: 'NodePort',
      selector: { a: 'b' },
      ports: [
        { name: 'web', port: 80, targetPort: 'http' },
        { name: 'dns', port: 53, protocol: 'UDP' },
      ],
    },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', selector: { a: 'b' }, ports: [{ port: 80 }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'example.com' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'headless' }, spec: { clusterIP: 'None', selector: { a: 'b' }, ports: [{ port: 80 }] } },
  { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'manual' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } },
];

/**
 * Defaults of releases after 1.20 the agent sets as 1.30 does: per kind, the path, the value, and
 * the release and source that added it.
 */
const laterDefaults: Record<string, Array<{ path: string; value: unknown; since: string }>> = {
  Service: [
    { path: 'spec.internalTrafficPolicy', value: 'Cluster', since: '1.22 SetDefaults_Service (not for ExternalName)' },
    { path: 'spec.ipFamilyPolicy', value: 'SingleStack', since: '1.20 behind IPv6DualStack, on from 1.21: the registry' },
    { path: 'spec.ipFamilies', value: ['IPv4'], since: '1.20 behind IPv6DualStack, on from 1.21: the registry' },
    { path: 'spec.allocateLoadBalancerNodePorts', value: true, since: '1.24 SetDefaults_Service (LoadBalancer)' },
  ],
  Job: [
    { path: 'spec.completionMode', value: 'NonIndexed', since: '1.21 SetDefaults_Job' },
    { path: 'spec.suspend', value: false, since: '1.21 SetDefaults_Job' },
    { path: 'spec.podReplacementPolicy', value: 'TerminatingOrFailed', since: '1.29 SetDefaults_Job (JobPodReplacementPolicy beta)' },
  ],
  StatefulSet: [
    { path: 'spec.persistentVolumeClaimRetentionPolicy', value: { whenDeleted: 'Retain', whenScaled: 'Retain' }, since: '1.27 SetDefaults_StatefulSet' },
  ],
  DaemonSet: [{ path: 'spec.updateStrategy.rollingUpdate.maxSurge', value: 0, since: '1.22 SetDefaults_DaemonSet' }],
};
/** Job labels from 1.27 (the batch.kubernetes.io/ prefixed pair beside the legacy ones). */
const laterJobLabels = ['batch.kubernetes.io/controller-uid', 'batch.kubernetes.io/job-name'];

function at(o: Obj, path: string): { parent: Obj; key: string } {
  const keys = path.split('.');
  let parent = o;
  for (const k of keys.slice(0, -1)) parent = parent?.[k];
  return { parent, key: keys[keys.length - 1]! };
}

/** JSON without nulls, nor the template metadata left empty without them (Go writes `metadata: {creationTimestamp: null}`). */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null)
        .map(([k, x]) => [k, dropNulls(x)] as const)
        .filter(([k, x]) => !(k === 'metadata' && Object.keys(x as object).length === 0)),
    );
  }
  return v;
}

/** What both servers store for the kind, without what each assigns. */
function comparable(input: Obj): Obj {
  const o = dropNulls(structuredClone(input)) as Obj;
  for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'selfLink', 'managedFields', 'generation']) delete o.metadata[k];
  delete o.status;
  if (o.kind === 'Pod') {
    delete o.spec.nodeName;
    for (const a of ['kubernetes.io/config.hash', 'kubernetes.io/config.source']) delete o.metadata.annotations?.[a];
    if (o.metadata.annotations && Object.keys(o.metadata.annotations).length === 0) delete o.metadata.annotations;
    // The reference server runs with the ServiceAccount admission plugin off (it has no controller to make
    // the `default` accounts): what that plugin adds is left out of the comparison (tested in
    // test/kubeapi/serviceaccount/admission.test.ts).
    delete o.spec.serviceAccount;
    delete o.spec.serviceAccountName;
    const tokenVolume = (n: unknown) => typeof n === 'string' && n.startsWith('kube-api-access-');
    o.spec.volumes = (o.spec.volumes ?? []).filter((v: Obj) => !tokenVolume(v.name));
    if (o.spec.volumes.length === 0) delete o.spec.volumes;
    for (const c of [...(o.spec.initContainers ?? []), ...(o.spec.containers ?? [])]) {
      c.volumeMounts = (c.volumeMounts ?? []).filter((m: Obj) => !tokenVolume(m.name));
      if (c.volumeMounts.length === 0) delete c.volumeMounts;
    }
  }
  if (o.kind === 'Service') {
    if (o.spec.clusterIP !== 'None') {
      delete o.spec.clusterIP;
      delete o.spec.clusterIPs;
    }
    for (const p of o.spec.ports ?? []) delete p.nodePort;
  }
  if (o.kind === 'Job') {
    const uid = input.metadata.uid as string;
    const scrub = (labels: Obj | undefined) => {
      for (const k of Object.keys(labels ?? {})) if (labels![k] === uid) labels![k] = '<uid>';
      for (const k of laterJobLabels) delete labels?.[k];
    };
    scrub(o.metadata.labels);
    scrub(o.spec.template.metadata.labels);
    // The generated selector: controller-uid until 1.26, batch.kubernetes.io/controller-uid since 1.27.
    o.spec.selector = '<generated>';
  }
  return o;
}

async function createIn(run: (args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>, file: string): Promise<Obj> {
  const r = await run(['create', '-f', file, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Obj;
}

test('the agent stores each kind with the defaults kube-apiserver gives it', { skip }, async (t) => {
  const api = env.api(t);
  for (const m of manifests) {
    const file = join(api.dir, `${m.kind}-${m.metadata.name}.json`);
    writeFileSync(file, JSON.stringify(m));
    const want = await createIn((args) => kcp!.kubectl(args), file);
    // kube-apiserver 1.20 serves CronJob in batch/v1beta1 only; the agent, as a 1.25+ server, in
    // batch/v1 only: the same object in each one's version, compared as one.
    const agentFile = join(api.dir, `${m.kind}-${m.metadata.name}.agent.json`);
    writeFileSync(agentFile, JSON.stringify(m.kind === 'CronJob' ? { ...m, apiVersion: 'batch/v1' } : m));
    const got = await createIn((args) => kubectl(api, args), agentFile);
    if (m.kind === 'CronJob') got.apiVersion = want.apiVersion;
    for (const d of laterDefaults[m.kind] ?? []) {
      const { parent, key } = at(got, d.path);
      if (m.kind === 'Service' && m.spec.type === 'ExternalName' && d.path !== 'spec.allocateLoadBalancerNodePorts') continue;
      if (d.path === 'spec.allocateLoadBalancerNodePorts' && m.spec.type !== 'LoadBalancer') {
        assert.equal(parent?.[key], undefined, `${m.kind}/${m.metadata.name}: ${d.path}`);
        continue;
      }
      assert.deepEqual(parent?.[key], d.value, `${m.kind}/${m.metadata.name}: ${d.path} (${d.since})`);
      delete parent[key];
    }
    if (m.kind === 'Job') for (const k of laterJobLabels) assert.ok(got.spec.template.metadata.labels[k], k);
    if (m.kind === 'Namespace') {
      // 1.21 SetDefaults_Namespace: the kubernetes.io/metadata.name label.
      assert.deepEqual(got.metadata.labels, { 'kubernetes.io/metadata.name': m.metadata.name });
      delete got.metadata.labels;
    }
    assert.deepEqual(comparable(got), comparable(want), `${m.kind}/${m.metadata.name}`);
  }
});

test('a gRPC probe is stored with service "" and kubectl 1.32 describes its pod', { skip: skip || (kubectl132Path ? false : 'no kubectl 1.32') }, async (t) => {
  const api = env.api(t);
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'grpc' },
    spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], readinessProbe: { grpc: { port: 9555 } } }] },
  };
  const file = join(api.dir, 'grpc.json');
  writeFileSync(file, JSON.stringify(pod));
  const got = await createIn((args) => kubectl(api, args), file);
  assert.deepEqual(got.spec.containers[0].readinessProbe.grpc, { port: 9555, service: '' });
  const r = await runKubectl(kubectl132Path!, api, ['describe', 'pod', 'grpc']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Readiness:\s+grpc <pod>:9555  delay=0s timeout=1s period=10s #success=1 #failure=3/);
});

test('a DaemonSet counts its template generation as kube-apiserver does', { skip }, async (t) => {
  const api = env.api(t);
  const ds = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'gen' },
    spec: { selector: selector('gen'), template: template('gen', { containers: [{ name: 'c', image: 'busybox' }] }) },
  };
  const file = join(api.dir, 'gen.json');
  writeFileSync(file, JSON.stringify(ds));
  const servers = [(args: string[]) => kcp!.kubectl(args), (args: string[]) => kubectl(api, args)];
  const generation = async (run: (args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>) => {
    const r = await run(['get', 'daemonset', 'gen', '-o', 'jsonpath={.metadata.annotations.deprecated\\.daemonset\\.template\\.generation}']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  const seen: string[][] = [];
  for (const run of servers) {
    await createIn(run, file);
    const steps = [await generation(run)];
    // A change of the DaemonSet's own labels leaves the template generation; a change of the template counts it up.
    assert.equal((await run(['label', 'daemonset', 'gen', 'tier=web'])).code, 0);
    steps.push(await generation(run));
    assert.equal((await run(['set', 'image', 'daemonset/gen', 'c=busybox:1.36'])).code, 0);
    steps.push(await generation(run));
    seen.push(steps);
  }
  assert.deepEqual(seen[0], ['1', '1', '2']);
  assert.deepEqual(seen[1], seen[0]);
});
