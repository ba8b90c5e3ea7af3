// The manifest loader: one row per source shape (file, multi-document, List, directory, stdin)
// and per failure (syntax error location, unknown kind, unknown field, --validate modes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { loadManifests, readableKinds, ManifestError, secretBytes, type LoadOptions } from '../../src/config/load.js';
import { validateForProcessRuntime } from '../../src/runtime/process/validation.js';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));
const base: LoadOptions = { cwd: fixtures, nodeName: 'node-1' };

async function problems(sources: string[], opts: LoadOptions = {}): Promise<string[]> {
  try {
    await loadManifests(sources, { ...base, ...opts });
  } catch (err) {
    assert.ok(err instanceof ManifestError, String(err));
    return err.problems;
  }
  assert.fail('expected loading to fail');
}

const names = (pods: { metadata?: { name?: string } }[]) => pods.map((p) => p.metadata?.name);

test('multi-document YAML: every kind kept, empty documents skipped', async () => {
  const m = await loadManifests(['multi.yaml'], base);
  assert.deepEqual(names(m.pods), ['app']);
  assert.deepEqual(names(m.configMaps), ['settings']);
  assert.deepEqual(names(m.secrets), ['token']);
  assert.equal(m.configMap('default', 'settings')?.data?.MODE, 'demo');
  assert.equal(secretBytes(m.secret('default', 'token')!).get('token')?.toString(), 'abc123');
  assert.equal(m.secret('other', 'token'), undefined);
  assert.deepEqual(m.podOrigins[0], { file: 'multi.yaml', path: join(fixtures, 'multi.yaml'), document: 'document 3' });
});

test('kind: List expands its items', async () => {
  const m = await loadManifests(['list.yaml'], base);
  assert.deepEqual(names(m.pods), ['one', 'two']);
  assert.equal(m.podOrigins[1]!.document, 'document 0, items[1]');
});

test('directory: *.yaml, *.yml, *.json in name order; dot-files, other files and subdirectories skipped', async () => {
  const m = await loadManifests(['dir'], base);
  assert.deepEqual(names(m.pods), ['first', 'second', 'third']);
});

test('repeated -f sources load in order', async () => {
  const m = await loadManifests(['list.yaml', 'dir/c-third.yml'], base);
  assert.deepEqual(names(m.pods), ['one', 'two', 'third']);
});

test('stdin with -f -', async () => {
  const yaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: piped}\nspec:\n  containers: [{name: c, image: "busybox:1.36", command: ["true"]}]\n';
  const m = await loadManifests(['-'], { ...base, stdin: () => Readable.from([Buffer.from(yaml)]) });
  assert.deepEqual(names(m.pods), ['piped']);
  assert.deepEqual(m.podOrigins[0], { file: 'STDIN', document: 'document 0' });
});

test('pods come back defaulted', async () => {
  const m = await loadManifests(['list.yaml'], base);
  const pod = m.pods[0]!;
  assert.equal(pod.spec!.restartPolicy, 'Always');
  assert.equal(pod.spec!.nodeName, 'node-1');
  assert.match(pod.metadata!.uid!, /^[0-9a-f]{32}$/);
});

test('the same file gives the same UIDs; an edited pod a new one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-load-'));
  try {
    const file = join(dir, 'pod.yaml');
    const write = (image: string) =>
      writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: "${image}", command: ["true"]}]\n`);
    write('busybox:1.36');
    const uid = async () => (await loadManifests([file], base)).pods[0]!.metadata!.uid;
    const first = await uid();
    assert.equal(await uid(), first);
    write('busybox:1.37');
    assert.notEqual(await uid(), first);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const failures: [string, string[], LoadOptions, string[]][] = [
  ['missing file', ['nope.yaml'], {}, ['error: the path "nope.yaml" does not exist']],
  [
    'YAML syntax error with file:line:column',
    ['syntax-error.yaml'],
    {},
    ['error: syntax-error.yaml:9:1: Flow sequence in block collection must be sufficiently indented and end with a ]'],
  ],
  ["a workload judged by the API server's validation of its kind", ['deployment.yaml'], {}, ['The Deployment "web" is invalid: spec.selector: Required value']],
  [
    'unknown field with a suggestion',
    ['typo.yaml'],
    {},
    ['error: typo.yaml:13:7: spec.containers[0].livenessProbe.initialDelaySecond: unknown field "initialDelaySecond" (did you mean "initialDelaySeconds"?)'],
  ],
  [
    'validation errors of every pod, kubectl style',
    ['invalid.yaml'],
    {},
    [
      'The Pod "web" is invalid: \n' +
        '* spec.containers[0].image: Required value\n' +
        '* spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive\n' +
        '* spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      'The Pod "other" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ],
  ],
  [
    'problems of several sources together',
    ['nope.yaml', 'typo.yaml', 'deployment.yaml'],
    {},
    [
      'error: the path "nope.yaml" does not exist',
      'error: typo.yaml:13:7: spec.containers[0].livenessProbe.initialDelaySecond: unknown field "initialDelaySecond" (did you mean "initialDelaySeconds"?)',
      'The Deployment "web" is invalid: spec.selector: Required value',
    ],
  ],
  ['process runtime rules on request', ['list.yaml'], { extraValidation: validateForProcessRuntime }, []],
];

for (const [name, sources, opts, want] of failures) {
  test(`loader: ${name}`, async () => {
    if (want.length === 0) {
      await loadManifests(sources, { ...base, ...opts });
      return;
    }
    assert.deepEqual(await problems(sources, opts), want);
  });
}

const otherKinds = readableKinds();
const kindRows: [string, string, string][] = [
  [
    'a workload in a version podvisor does not read',
    'apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n',
    'no matches for kind "Deployment" in version "extensions/v1beta1": podvisor reads Deployment in apps/v1 (extensions/v1beta1 Deployment was removed in Kubernetes 1.16; set apiVersion: apps/v1)',
  ],
  [
    'a CronJob in batch/v1beta1, which the release served (1.30) no longer has',
    'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: nightly}\n',
    'no matches for kind "CronJob" in version "batch/v1beta1": podvisor reads CronJob in batch/v1 (batch/v1beta1 CronJob was removed in Kubernetes 1.25; set apiVersion: batch/v1)',
  ],
  [
    'a PodDisruptionBudget in policy/v1beta1, which the release served (1.30) no longer has',
    'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: web}\n',
    'no matches for kind "PodDisruptionBudget" in version "policy/v1beta1": podvisor reads PodDisruptionBudget in policy/v1 (policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25; set apiVersion: policy/v1)',
  ],
  [
    'a ClusterRole in rbac.authorization.k8s.io/v1beta1, which the release served (1.30) no longer has',
    'apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole\nmetadata: {name: r}\n',
    'no matches for kind "ClusterRole" in version "rbac.authorization.k8s.io/v1beta1": podvisor reads ClusterRole in rbac.authorization.k8s.io/v1 (rbac.authorization.k8s.io/v1beta1 ClusterRole was removed in Kubernetes 1.22; set apiVersion: rbac.authorization.k8s.io/v1)',
  ],
  ['PodTemplate', 'apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t}\n', 'v1 PodTemplate "t" is not supported: podvisor runs Pods; use its template'],
  ['Pod in a wrong version', 'apiVersion: v2\nkind: Pod\nmetadata: {name: p}\n', 'no matches for kind "Pod" in version "v2": podvisor reads v1 objects'],
  ['no kind', 'apiVersion: v1\nmetadata: {name: p}\n', 'kind not set'],
  ['not an object', '- a\n- b\n', 'expected an object with apiVersion and kind'],
  // A kind that names a property of every object is a kind like any other.
  ['kind __proto__', 'apiVersion: v1\nkind: __proto__\nmetadata: {name: x}\n', `v1 __proto__ "x" is not supported: ${otherKinds}`],
  ['kind constructor', 'apiVersion: v1\nkind: constructor\nmetadata: {name: x}\n', `v1 constructor "x" is not supported: ${otherKinds}`],
  // kubectl's words for each field (its validation's getObjectKind), never the value printed.
  ['kind a mapping', 'apiVersion: v1\nkind: {name: Pod}\nmetadata: {name: x}\n', "kind isn't string type"],
  ['apiVersion a mapping', 'apiVersion: {group: ""}\nkind: Pod\nmetadata: {name: x}\n', "apiVersion isn't string type"],
  ['both mappings', 'apiVersion: {a: 1}\nkind: {b: 2}\n', "apiVersion isn't string type, kind isn't string type"],
  ['apiVersion a list, kind missing', 'apiVersion: [v1]\nmetadata: {name: x}\n', "apiVersion isn't string type, kind not set"],
  ['kind a number', 'apiVersion: v1\nkind: 0\n', "kind isn't string type"],
];

for (const [name, yaml, want] of kindRows) {
  test(`loader kinds: ${name}`, async () => {
    const got = await problems(['-'], { stdin: () => Readable.from([Buffer.from(yaml)]) });
    assert.deepEqual(got, [`error: unable to recognize "STDIN": STDIN:1:1: document 0: ${want}`]);
  });
}

test('workloads and Services beside pods, in any order: defaulted as the API server defaults them, in input order', async () => {
  const yaml = [
    'apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: busybox, command: ["true"]}]',
    'apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\nspec:\n  containers: [{name: c, image: busybox, command: [sleep, "9"]}]',
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: busybox, command: [sleep, "9"]}]',
    'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]',
    'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: "@daily"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers: [{name: nightly, image: busybox, command: ["true"]}]',
  ].join('\n---\n');
  const m = await loadManifests(['-'], { ...base, stdin: () => Readable.from([Buffer.from(yaml)]) });
  assert.deepEqual(names(m.pods), ['bare']);
  assert.deepEqual(
    m.objects.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}`),
    ['batch/v1 Job default/migrate', 'apps/v1 Deployment shop/web', 'v1 Service default/web', 'batch/v1 CronJob default/nightly'],
  );
  const deploy = m.objects[1]!.spec as { replicas: number; strategy: { rollingUpdate: { maxSurge: string } }; template: { spec: { dnsPolicy: string } } };
  assert.deepEqual([deploy.replicas, deploy.strategy.rollingUpdate.maxSurge, deploy.template.spec.dnsPolicy], [1, '25%', 'ClusterFirst']);
  assert.equal((m.objects[2]!.spec as { ports: { targetPort: number }[] }).ports[0]!.targetPort, 80);
  // As written, for the API server to default: no defaults, the namespace set.
  assert.equal((m.objectManifests[1]!.spec as { replicas?: number }).replicas, undefined);
  assert.equal(m.objectManifests[0]!.metadata?.namespace, 'default');
});

test("workload errors of every object at once, in the API server's words", async () => {
  const yaml = [
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: -1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: other}}\n    spec:\n      containers: [{name: web, image: busybox}]',
    'apiVersion: batch/v1\nkind: Job\nmetadata: {name: once}\nspec:\n  template:\n    spec:\n      restartPolicy: Always\n      containers: [{name: x, image: busybox}]',
  ].join('\n---\n');
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(yaml)]) }), [
    'The Deployment "web" is invalid: \n' +
      '* spec.replicas: Invalid value: -1: must be greater than or equal to 0\n' +
      '* spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`',
    'The Job "once" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
  ]);
});

test("a policy/v1 PodDisruptionBudget is read beside the workloads, judged in the API server's words", async () => {
  const ok = 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 50%\n  selector: {matchLabels: {app: web}}';
  const loaded = await loadManifests(['-'], { ...base, stdin: () => Readable.from([Buffer.from(ok)]) });
  assert.deepEqual(
    loaded.objects.map((o) => [o.kind, o.metadata?.namespace, o.metadata?.name]),
    [['PodDisruptionBudget', 'default', 'web']],
  );
  const bad =
    'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: both}\nspec:\n  minAvailable: 1\n  maxUnavailable: 101%\n  selector: {matchLabels: {app: web}}';
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(bad)]) }), [
    'The PodDisruptionBudget "both" is invalid: \n' +
      '* spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(0xc000000000), Selector:(*v1.LabelSelector)(0xc000000000), MaxUnavailable:(*intstr.IntOrString)(0xc000000000), UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set\n' +
      '* spec.maxUnavailable: Invalid value: "101%": must not be greater than 100%',
  ]);
});

test("a v1 ServiceAccount is read beside the workloads, judged in the API server's words", async () => {
  const ok = 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: frontend}\nautomountServiceAccountToken: false\nimagePullSecrets: [{name: reg}]';
  const loaded = await loadManifests(['-'], { ...base, stdin: () => Readable.from([Buffer.from(ok)]) });
  assert.deepEqual(
    loaded.objects.map((o) => [o.kind, o.metadata?.namespace, o.metadata?.name]),
    [['ServiceAccount', 'default', 'frontend']],
  );
  const bad = 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: Front_End}';
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(bad)]) }), [
    "The ServiceAccount \"Front_End\" is invalid: metadata.name: Invalid value: \"Front_End\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ]);
});

test('v1 LimitRange and ResourceQuota and networking.k8s.io/v1 NetworkPolicy are read, defaulted and judged as the API server judges them', async () => {
  const ok = [
    'apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits}\nspec:\n  limits: [{type: Container, max: {cpu: "2"}}]',
    'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: "10", count/deployments.apps: "2"}',
    'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: deny}\nspec:\n  podSelector: {}\n  egress: [{}]',
  ].join('\n---\n');
  const loaded = await loadManifests(['-'], { ...base, stdin: () => Readable.from([Buffer.from(ok)]) });
  assert.deepEqual(
    loaded.objects.map((o) => [o.kind, o.metadata?.name]),
    [
      ['LimitRange', 'limits'],
      ['ResourceQuota', 'q'],
      ['NetworkPolicy', 'deny'],
    ],
  );
  assert.deepEqual((loaded.objects[0]!.spec as { limits: Array<{ default: unknown }> }).limits[0]!.default, { cpu: '2' });
  assert.deepEqual((loaded.objects[2]!.spec as { policyTypes: string[] }).policyTypes, ['Ingress', 'Egress']);
  const bad = [
    'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: "-1"}',
    'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np}\nspec:\n  podSelector: {}\n  policyTypes: [Sideways]',
  ].join('\n---\n');
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(bad)]) }), [
    'The ResourceQuota "q" is invalid: spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0',
    'The NetworkPolicy "np" is invalid: spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
  ]);
});

test('two documents of one kind and name are kept in order, with a warning, as kubectl apply -f DIR applies them', async () => {
  const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {v: "${v}"}`;
  const job =
    'apiVersion: batch/v1\nkind: Job\nmetadata: {name: once}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: x, image: busybox, command: ["true"]}]';
  const warnings: string[] = [];
  const m = await loadManifests(['-'], {
    ...base,
    onWarning: (w) => warnings.push(w),
    stdin: () => Readable.from([Buffer.from([cm('1'), job, cm('2'), job].join('\n---\n'))]),
  });
  assert.deepEqual(
    m.configMaps.map((c) => c.data?.v),
    ['1', '2'],
  );
  assert.equal(m.configMap('default', 'cfg')?.data?.v, '2');
  assert.deepEqual(names(m.objects), ['once', 'once']);
  assert.deepEqual(warnings, [
    'configmap/cfg is defined more than once: each is applied in turn, the last one wins',
    'job.batch/once is defined more than once: each is applied in turn, the last one wins',
  ]);
});

test('a pod named twice (across files) is the last one, with a warning', async () => {
  const warnings: string[] = [];
  const m = await loadManifests(['list.yaml', '-'], {
    ...base,
    onWarning: (w) => warnings.push(w),
    stdin: () => Readable.from([Buffer.from('apiVersion: v1\nkind: Pod\nmetadata: {name: one}\nspec:\n  containers: [{name: last, image: busybox}]\n')]),
  });
  assert.deepEqual(names(m.pods), ['two', 'one']);
  assert.deepEqual([m.pods[1]!.spec?.containers[0]?.name, m.podOrigins[1]!.file, m.podManifests[1]!.spec?.containers[0]?.name], ['last', 'STDIN', 'last']);
  assert.deepEqual(warnings, ['pod/one is defined more than once: the last one is used']);
});

test('a Job with generateName and no name is accepted, as the API server names it before validation', async () => {
  const yaml =
    'apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: hook-}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: x, image: busybox, command: ["true"]}]';
  const m = await loadManifests(['-'], { ...base, stdin: () => Readable.from([Buffer.from(yaml)]) });
  assert.deepEqual([m.objects[0]!.metadata?.name, m.objects[0]!.metadata?.generateName], [undefined, 'hook-']);
  // Neither name nor generateName: refused in the API server's words.
  const none = yaml.replace('{generateName: hook-}', '{labels: {a: b}}');
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(none)]) }), [
    'The Job "" is invalid: metadata.name: Required value: name or generateName is required',
  ]);
});

test('type errors are reported with their location', async () => {
  const yaml =
    'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n    env:\n    - name: ENABLED\n      value: yes\n';
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(yaml)]) }), [
    'error: STDIN:10:14: spec.containers[0].env[0].value: Invalid value: true: must be a string',
  ]);
});

test('--validate=warn reports unknown fields as warnings and loads; ignore drops them silently', async () => {
  const warnings: string[] = [];
  const m = await loadManifests(['typo.yaml'], { ...base, validate: 'warn', onWarning: (w) => warnings.push(w) });
  assert.deepEqual(names(m.pods), ['typo']);
  assert.deepEqual(warnings, [
    'typo.yaml:13:7: spec.containers[0].livenessProbe.initialDelaySecond: unknown field "initialDelaySecond" (did you mean "initialDelaySeconds"?)',
  ]);
  assert.equal('initialDelaySecond' in m.pods[0]!.spec!.containers[0]!.livenessProbe!, false);
  const quiet: string[] = [];
  const m2 = await loadManifests(['typo.yaml'], { ...base, validate: 'ignore', onWarning: (w) => quiet.push(w) });
  assert.deepEqual(names(m2.pods), ['typo']);
  assert.deepEqual(quiet, []);
});

test('process runtime: command required', async () => {
  const yaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: "nginx:1.25"}]\n';
  assert.deepEqual(await problems(['-'], { extraValidation: validateForProcessRuntime, stdin: () => Readable.from([Buffer.from(yaml)]) }), [
    'The Pod "p" is invalid: spec.containers[0].command: Required value: container "c" has no command: the process runtime runs the command on the host and cannot read the image\'s entrypoint; set command, or install containerd runc containernetworking-plugins and use --runtime=containerd',
  ]);
});

test("process runtime: a workload's pod template is judged by the same rules, under its path, every object at once", async () => {
  const yaml = [
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}, {name: ok, image: busybox, command: [sleep, "9"]}]',
    'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: "@daily"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          initContainers: [{name: init, image: busybox}]\n          containers: [{name: main, image: busybox, command: ["true"]}]',
    'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: busybox, command: [sleep, "9"]}]',
  ].join('\n---\n');
  const detail = (c: string) =>
    `Required value: container "${c}" has no command: the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or install containerd runc containernetworking-plugins and use --runtime=containerd`;
  assert.deepEqual(await problems(['-'], { extraValidation: validateForProcessRuntime, stdin: () => Readable.from([Buffer.from(yaml)]) }), [
    `The Deployment "web" is invalid: spec.template.spec.containers[0].command: ${detail('web')}`,
    `The CronJob "nightly" is invalid: spec.jobTemplate.spec.template.spec.initContainers[0].command: ${detail('init')}`,
  ]);
});

test('an input without objects is an error unless allowed', async () => {
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from('---\n# nothing\n')]) }), ['error: no objects passed']);
  const m = await loadManifests(['-'], { ...base, allowEmpty: true, stdin: () => Readable.from([Buffer.from('')]) });
  assert.deepEqual(m.pods, []);
});

test('Secret values must be base64', async () => {
  const yaml = 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {key: "not base64!"}\n';
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(yaml)]) }), [
    'The Secret "s" is invalid: data[key]: Invalid value: "<secret contents redacted>": illegal base64 data at input byte 3',
  ]);
});

test('RBAC kinds: cluster-scoped roles keep no namespace, bindings get their api groups defaulted, errors in the API server words', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-rbac-'));
  const file = join(dir, 'rbac.yaml');
  writeFileSync(
    file,
    [
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nrules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: reader}\nroleRef: {kind: ClusterRole, name: reader}\nsubjects: [{kind: User, name: alice}]',
    ].join('\n---\n'),
  );
  const loaded = await loadManifests([file]);
  const [role, binding] = loaded.objects as Array<{
    metadata: { namespace?: string };
    roleRef?: { apiGroup: string };
    subjects?: Array<{ apiGroup?: string }>;
  }>;
  assert.equal(role!.metadata.namespace, undefined);
  assert.equal(binding!.metadata.namespace, 'default');
  assert.equal(binding!.roleRef!.apiGroup, 'rbac.authorization.k8s.io');
  assert.equal(binding!.subjects![0]!.apiGroup, 'rbac.authorization.k8s.io');
  writeFileSync(file, 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: bad}\nrules: [{verbs: [get]}]\n');
  await assert.rejects(loadManifests([file]), (err: Error) => {
    assert.match(err.message, /rules\[0\]\.apiGroups: Required value: resource rules must supply at least one api group/);
    assert.match(err.message, /rules\[0\]\.resources: Required value: resource rules must supply at least one resource/);
    return true;
  });
  rmSync(dir, { recursive: true, force: true });
});

test("networking.k8s.io/v1 Ingress and IngressClass are read beside the workloads, judged in the API server's words", async () => {
  const ok =
    'apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: mine}\nspec: {controller: example.com/ingress, parameters: {kind: K, name: p}}\n---\n' +
    'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec:\n  rules: [{host: web.localhost, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]';
  const loaded = await loadManifests(['-'], { ...base, stdin: () => Readable.from([Buffer.from(ok)]) });
  assert.deepEqual(
    loaded.objects.map((o) => [o.kind, o.metadata?.namespace, o.metadata?.name]),
    [
      ['IngressClass', undefined, 'mine'],
      ['Ingress', 'default', 'web'],
    ],
  );
  assert.equal((loaded.objects[0]!.spec as { parameters: { scope: string } }).parameters.scope, 'Cluster');
  const bad =
    'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad}\nspec:\n  rules: [{host: 10.0.0.1, http: {paths: [{path: /x, backend: {service: {name: web, port: {number: 80}}}}]}}]';
  assert.deepEqual(await problems(['-'], { stdin: () => Readable.from([Buffer.from(bad)]) }), [
    'The Ingress "bad" is invalid: \n' +
      '* spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address\n' +
      '* spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
  ]);
});
