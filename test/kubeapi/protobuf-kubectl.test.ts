// kubectl 1.32's typed clients against the agent: `kubectl create <kind>` sends the object as
// Kubernetes protobuf (`application/vnd.kubernetes.protobuf`, the `k8s\0` runtime.Unknown envelope)
// and asks for protobuf back first. Every typed create subcommand of kubectl 1.32 (namespace,
// configmap, secret, deployment, cronjob, job, service, serviceaccount, token, the RBAC kinds,
// ingress, poddisruptionbudget, priorityclass, quota), read back as stored; fieldValidation's Strict
// and Warn answers; and server-side dry runs that allocate nothing (NodePorts, ClusterIPs, generated
// names, quota usage, provisioned volumes).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { freePortIn } from '../fixtures/ports.js';
import { waitFor } from '../fixtures/wait.js';
import { kubectl132Path, runKubectl } from './harness.js';

const skip = kubectl132Path ? false : 'no kubectl 1.32 (set KUBECTL132)';
const env = useKubectlAgent(skip);

type Api = { kubeconfig: string; dir: string };
const k = (api: Api, args: string[], input?: string) => runKubectl(kubectl132Path!, api, args, input);

async function getJSON(api: Api, args: string[]): Promise<Record<string, any>> {
  const r = await k(api, ['get', ...args, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, any>;
}

test('every kubectl create subcommand of a served kind works in protobuf, and reads back as sent', { skip }, async (t) => {
  const api = env.api(t);
  const ok = async (args: string[]) => {
    const r = await k(api, ['create', ...args]);
    assert.equal(r.code, 0, `kubectl create ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  assert.match(await ok(['namespace', 'wire']), /namespace\/wire created/);
  assert.match(await ok(['configmap', 'settings', '-n', 'wire', '--from-literal=mode=fast', '--from-literal=level=3']), /configmap\/settings created/);
  assert.match(await ok(['secret', 'generic', 'creds', '-n', 'wire', '--from-literal=password=s3cr\u00e9t']), /secret\/creds created/);
  assert.match(
    await ok(['secret', 'docker-registry', 'pull', '-n', 'wire', '--docker-server=r.example', '--docker-username=u', '--docker-password=p']),
    /secret\/pull created/,
  );
  const key = join(api.dir, 'tls.key');
  const crt = join(api.dir, 'tls.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', '1', '-subj', '/CN=wire'], {
    stdio: 'ignore',
  });
  assert.match(await ok(['secret', 'tls', 'cert', '-n', 'wire', `--cert=${crt}`, `--key=${key}`]), /secret\/cert created/);
  assert.match(
    await ok(['deployment', 'idle', '-n', 'wire', '--image=busybox', '--replicas=0', '--port=8080', '--', 'sleep', '3600']),
    /deployment\.apps\/idle created/,
  );
  assert.match(await ok(['cronjob', 'tick', '-n', 'wire', '--image=busybox', '--schedule=*/5 * * * *', '--', 'true']), /cronjob\.batch\/tick created/);
  assert.match(await ok(['job', 'once', '-n', 'wire', '--image=busybox', '--', 'true']), /job\.batch\/once created/);
  assert.match(await ok(['job', 'manual', '-n', 'wire', '--from=cronjob/tick']), /job\.batch\/manual created/);
  assert.match(await ok(['service', 'clusterip', 'web', '-n', 'wire', '--tcp=80:8080']), /service\/web created/);
  assert.match(await ok(['service', 'clusterip', 'headless', '-n', 'wire', '--clusterip=None', '--tcp=80:8080']), /service\/headless created/);
  assert.match(await ok(['service', 'nodeport', 'np', '-n', 'wire', '--tcp=81:http']), /service\/np created/);
  assert.match(await ok(['service', 'loadbalancer', 'lb', '-n', 'wire', '--tcp=82:8082']), /service\/lb created/);
  assert.match(await ok(['service', 'externalname', 'ext', '-n', 'wire', '--external-name=example.com']), /service\/ext created/);

  // Read back: what the protobuf carried, as the API server's JSON would show it.
  const ns = await getJSON(api, ['namespace', 'wire']);
  assert.equal(ns.status.phase, 'Active');
  const cm = await getJSON(api, ['configmap', 'settings', '-n', 'wire']);
  assert.deepEqual(cm.data, { level: '3', mode: 'fast' });
  const secret = await getJSON(api, ['secret', 'creds', '-n', 'wire']);
  assert.equal(secret.type, 'Opaque');
  assert.equal(Buffer.from(secret.data.password, 'base64').toString('utf8'), 's3cr\u00e9t');
  assert.equal((await getJSON(api, ['secret', 'pull', '-n', 'wire'])).type, 'kubernetes.io/dockerconfigjson');
  assert.equal((await getJSON(api, ['secret', 'cert', '-n', 'wire'])).type, 'kubernetes.io/tls');
  const deploy = await getJSON(api, ['deployment', 'idle', '-n', 'wire']);
  // A pointer sent at zero is a value: replicas 0 stays 0 (not defaulted to 1).
  assert.equal(deploy.spec.replicas, 0);
  assert.deepEqual(deploy.spec.template.spec.containers[0].command, ['sleep', '3600']);
  assert.equal(deploy.spec.template.spec.containers[0].ports[0].containerPort, 8080);
  // A non-pointer sent at zero is unset: the server's defaults apply.
  assert.equal(deploy.spec.template.spec.restartPolicy, 'Always');
  assert.equal(deploy.spec.strategy.rollingUpdate.maxSurge, '25%');
  assert.equal(deploy.metadata.creationTimestamp !== undefined, true);
  const cj = await getJSON(api, ['cronjob', 'tick', '-n', 'wire']);
  assert.equal(cj.spec.schedule, '*/5 * * * *');
  const manual = await getJSON(api, ['job', 'manual', '-n', 'wire']);
  assert.equal(manual.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
  assert.equal(manual.metadata.ownerReferences[0].kind, 'CronJob');
  const web = await getJSON(api, ['service', 'web', '-n', 'wire']);
  assert.equal(web.spec.ports[0].port, 80);
  assert.equal(web.spec.ports[0].targetPort, 8080);
  assert.match(web.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
  assert.equal((await getJSON(api, ['service', 'headless', '-n', 'wire'])).spec.clusterIP, 'None');
  const np = await getJSON(api, ['service', 'np', '-n', 'wire']);
  assert.equal(np.spec.ports[0].targetPort, 'http');
  assert.ok(np.spec.ports[0].nodePort >= 30000);
  assert.equal((await getJSON(api, ['service', 'lb', '-n', 'wire'])).spec.type, 'LoadBalancer');
  assert.equal((await getJSON(api, ['service', 'ext', '-n', 'wire'])).spec.externalName, 'example.com');
});

test('kubectl create of RBAC, policy, scheduling, networking kinds, quota, ServiceAccount and token: each reads back as sent', { skip }, async (t) => {
  const api = env.api(t);
  const ok = async (args: string[]) => {
    const r = await k(api, ['create', ...args]);
    assert.equal(r.code, 0, `kubectl create ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  assert.match(await ok(['namespace', 'typed']), /namespace\/typed created/);
  assert.match(await ok(['serviceaccount', 'robot', '-n', 'typed']), /serviceaccount\/robot created/);
  assert.match((await ok(['token', 'robot', '-n', 'typed'])).trim(), /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.match(
    await ok(['clusterrole', 'typed-reader', '--verb=get,list,watch', '--resource=pods,deployments.apps', '--resource-name=a']),
    /clusterrole\.rbac\.authorization\.k8s\.io\/typed-reader created/,
  );
  assert.match(
    await ok(['clusterrole', 'typed-aggregate', '--aggregation-rule=typed.example.com/aggregate=true']),
    /clusterrole\.rbac\.authorization\.k8s\.io\/typed-aggregate created/,
  );
  assert.match(
    await ok(['clusterrolebinding', 'typed-readers', '--clusterrole=typed-reader', '--user=alice', '--group=devs', '--serviceaccount=typed:robot']),
    /clusterrolebinding\.rbac\.authorization\.k8s\.io\/typed-readers created/,
  );
  assert.match(await ok(['role', 'pod-reader', '-n', 'typed', '--verb=get', '--resource=pods']), /role\.rbac\.authorization\.k8s\.io\/pod-reader created/);
  assert.match(
    await ok(['rolebinding', 'robot-reads', '-n', 'typed', '--role=pod-reader', '--serviceaccount=typed:robot']),
    /rolebinding\.rbac\.authorization\.k8s\.io\/robot-reads created/,
  );
  assert.match(
    await ok(['ingress', 'web', '-n', 'typed', '--class=default', '--rule=foo.example/bar*=svc1:8080,tls=web-cert']),
    /ingress\.networking\.k8s\.io\/web created/,
  );
  assert.match(await ok(['poddisruptionbudget', 'web', '-n', 'typed', '--selector=app=web', '--min-available=1']), /poddisruptionbudget\.policy\/web created/);
  assert.match(
    await ok(['priorityclass', 'typed-high', '--value=1000', '--description=typed', '--preemption-policy=Never']),
    /priorityclass\.scheduling\.k8s\.io\/typed-high created/,
  );
  assert.match(await ok(['quota', 'limits', '-n', 'typed', '--hard=pods=10,count/deployments.apps=2']), /resourcequota\/limits created/);

  const cr = await getJSON(api, ['clusterrole', 'typed-reader']);
  assert.deepEqual(cr.rules, [
    { apiGroups: [''], resources: ['pods'], resourceNames: ['a'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['a'], verbs: ['get', 'list', 'watch'] },
  ]);
  const agg = await getJSON(api, ['clusterrole', 'typed-aggregate']);
  assert.deepEqual(agg.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'typed.example.com/aggregate': 'true' } }] });
  const crb = await getJSON(api, ['clusterrolebinding', 'typed-readers']);
  assert.deepEqual(crb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'typed-reader' });
  assert.deepEqual(
    crb.subjects.map((s: { kind: string; name: string; namespace?: string }) => `${s.kind}:${s.namespace ?? ''}:${s.name}`),
    ['User::alice', 'Group::devs', 'ServiceAccount:typed:robot'],
  );
  const role = await getJSON(api, ['role', 'pod-reader', '-n', 'typed']);
  assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
  const rb = await getJSON(api, ['rolebinding', 'robot-reads', '-n', 'typed']);
  assert.deepEqual(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' });
  assert.deepEqual(rb.subjects, [{ kind: 'ServiceAccount', name: 'robot', namespace: 'typed' }]);
  const r = await k(api, ['auth', 'can-i', 'get', 'pods', '-n', 'typed', '--as=system:serviceaccount:typed:robot']);
  assert.equal(r.stdout.trim(), 'yes', r.stderr);
  const ing = await getJSON(api, ['ingress', 'web', '-n', 'typed']);
  assert.equal(ing.spec.ingressClassName, 'default');
  assert.deepEqual(ing.spec.rules, [
    {
      host: 'foo.example',
      http: { paths: [{ path: '/bar', pathType: 'Prefix', backend: { service: { name: 'svc1', port: { number: 8080 } } } }] },
    },
  ]);
  assert.deepEqual(ing.spec.tls, [{ hosts: ['foo.example'], secretName: 'web-cert' }]);
  const pdb = await getJSON(api, ['poddisruptionbudget', 'web', '-n', 'typed']);
  assert.equal(pdb.spec.minAvailable, 1);
  assert.deepEqual(pdb.spec.selector, { matchLabels: { app: 'web' } });
  const pc = await getJSON(api, ['priorityclass', 'typed-high']);
  assert.deepEqual([pc.value, pc.description, pc.preemptionPolicy, pc.globalDefault ?? false], [1000, 'typed', 'Never', false]);
  const quota = await getJSON(api, ['quota', 'limits', '-n', 'typed']);
  assert.deepEqual(quota.spec.hard, { 'count/deployments.apps': '2', pods: '10' });
  assert.equal((await getJSON(api, ['serviceaccount', 'robot', '-n', 'typed'])).metadata.name, 'robot');
});

test('the agent answers in protobuf when kubectl asks for it first', { skip }, async (t) => {
  const api = env.api(t);
  const r = await k(api, ['create', 'configmap', 'answered', '--from-literal=a=b', '-v=8']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
  assert.match(r.stderr, /Accept: application\/vnd\.kubernetes\.protobuf,application\/json/);
  // The response's headers (after the request's): the object came back in protobuf too.
  const response = r.stderr.slice(r.stderr.indexOf('Response Status'));
  assert.match(response, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
  assert.match(r.stdout, /configmap\/answered created/);
});

test('fieldValidation: Strict refuses unknown fields in the API server words, Warn sends Warning headers, Ignore drops them', { skip }, async (t) => {
  const api = env.api(t);
  const manifest = (name: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}}\nspec:\n  replicas: 0\n  foo: 1\n  selector: {matchLabels: {app: ${name}}}\n` +
    `  template:\n    metadata: {labels: {app: ${name}}}\n    spec: {containers: [{name: c, image: busybox, command: [sleep, '3600'], bar: true}]}\n`;
  let r = await k(api, ['create', '--validate=strict', '-f', '-'], manifest('strict'));
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /Error from server \(BadRequest\): .*strict decoding error: unknown field "spec\.foo", unknown field "spec\.template\.spec\.containers\[0\]\.bar"/,
  );
  r = await k(api, ['create', '--validate=warn', '-f', '-'], manifest('warned'));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Warning: unknown field "spec\.foo"/);
  assert.match(r.stderr, /Warning: unknown field "spec\.template\.spec\.containers\[0\]\.bar"/);
  assert.doesNotMatch(JSON.stringify(await getJSON(api, ['deployment', 'warned'])), /"foo"|"bar"/);
  r = await k(api, ['create', '--validate=false', '-f', '-'], manifest('ignored'));
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /Warning/);

  // A key sent twice (JSON.parse would keep the last in silence): duplicate field, with its path.
  const dup = join(api.dir, 'dup.json');
  writeFileSync(dup, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup"},"data":{"a":"1"},"data":{"b":"2"},"foo":1}');
  r = await k(api, ['create', '--raw', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', '-f', dup]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /strict decoding error: unknown field "foo", duplicate field "metadata\.name", duplicate field "data"/);
  r = await k(api, ['create', '--raw', '/api/v1/namespaces/default/configmaps?fieldValidation=Warn', '-f', dup]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Warning: duplicate field "data"/);
  assert.deepEqual((await getJSON(api, ['configmap', 'dup'])).data, { b: '2' });
});

test('a server-side dry run allocates nothing: NodePorts, ClusterIPs and generated names stay free', { skip }, async (t) => {
  const api = env.api(t);
  // A NodePort no other process of the host holds (another agent may hold any fixed one).
  const asked = await freePortIn(30000, 32767);
  let r = await k(api, ['create', 'service', 'nodeport', 'planned', '--tcp=80:8080', `--node-port=${asked}`, '--dry-run=server', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const planned = JSON.parse(r.stdout) as { spec: { clusterIP: string; ports: Array<{ nodePort: number }> } };
  assert.equal(planned.spec.ports[0]!.nodePort, asked);
  // The real Service takes the port and the address the dry run showed: neither was held.
  r = await k(api, ['create', 'service', 'nodeport', 'real', '--tcp=80:8080', `--node-port=${asked}`, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const real = JSON.parse(r.stdout) as { spec: { clusterIP: string } };
  assert.equal(real.spec.clusterIP, planned.spec.clusterIP);

  // Without a port asked for: the one a dry run chose is given to the next Service for real.
  r = await k(
    api,
    ['apply', '--dry-run=server', '-o', 'json', '-f', '-'],
    'apiVersion: v1\nkind: Service\nmetadata: {name: applied}\nspec: {type: NodePort, ports: [{port: 80}]}\n',
  );
  assert.equal(r.code, 0, r.stderr);
  const chosen = (JSON.parse(r.stdout) as { spec: { ports: Array<{ nodePort: number }> } }).spec.ports[0]!.nodePort;
  r = await k(api, ['create', 'service', 'nodeport', 'second', '--tcp=80:8080', `--node-port=${chosen}`]);
  assert.equal(r.code, 0, r.stderr);

  r = await k(api, ['create', '--dry-run=server', '-o', 'json', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: gen-}\n');
  assert.equal(r.code, 0, r.stderr);
  assert.match((JSON.parse(r.stdout) as { metadata: { name: string } }).metadata.name, /^gen-[a-z0-9]{5}$/);
  r = await k(api, ['get', 'configmaps', '-o', 'name']);
  assert.doesNotMatch(r.stdout, /gen-/);
  r = await k(api, ['get', 'services', '-o', 'name']);
  assert.doesNotMatch(r.stdout, /planned|applied/);
});

test('a server-side dry run counts no quota usage and provisions no volume', { skip }, async (t) => {
  const api = env.api(t);
  let r = await k(api, ['create', 'namespace', 'dry']);
  assert.equal(r.code, 0, r.stderr);
  r = await k(api, ['create', 'quota', 'maps', '-n', 'dry', '--hard=configmaps=5']);
  assert.equal(r.code, 0, r.stderr);
  const used = async () => (await getJSON(api, ['quota', 'maps', '-n', 'dry'])).status?.used?.configmaps as string | undefined;
  // kube-root-ca.crt is the namespace's one ConfigMap once the quota's usage is counted.
  await waitFor('the quota usage to be counted', async () => (await used()) === '1');
  r = await k(api, ['create', 'configmap', 'planned', '-n', 'dry', '--from-literal=a=b', '--dry-run=server']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await used(), '1');
  r = await k(api, ['create', 'configmap', 'real', '-n', 'dry', '--from-literal=a=b']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await used(), '2');

  // A class that provisions at once: the dry-run claim leaves no volume, the real one gets one.
  const claim = (name: string) =>
    `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ${name}, namespace: dry}\n` +
    `spec: {storageClassName: dry-immediate, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}\n`;
  r = await k(
    api,
    ['create', '-f', '-'],
    `apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: dry-immediate}\nprovisioner: podvisor.io/local-path\nvolumeBindingMode: Immediate\n`,
  );
  assert.equal(r.code, 0, r.stderr);
  r = await k(api, ['create', '--dry-run=server', '-o', 'json', '-f', '-'], claim('planned'));
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { status?: { phase?: string } }).status?.phase, 'Pending');
  r = await k(api, ['create', '-f', '-'], claim('real'));
  assert.equal(r.code, 0, r.stderr);
  await waitFor('the real claim to be bound', async () => (await getJSON(api, ['pvc', 'real', '-n', 'dry'])).status?.phase === 'Bound');
  const volumes = (await getJSON(api, ['pv'])).items as Array<{ spec: { claimRef?: { name: string; namespace: string } } }>;
  assert.deepEqual(
    volumes.filter((v) => v.spec.claimRef?.namespace === 'dry').map((v) => v.spec.claimRef!.name),
    ['real'],
  );
  r = await k(api, ['get', 'pvc', '-n', 'dry', '-o', 'name']);
  assert.equal(r.stdout.trim(), 'persistentvolumeclaim/real');
});
