// API-server validation of pods: one row per rule, a manifest fragment → the exact messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPod } from '../../src/api/defaults.js';
import { formatFieldError } from '../../src/api/field-errors.js';
import type { Container, Pod } from '../../src/api/types.js';
import { validatePod, validatePods } from '../../src/api/validation/index.js';
import { validateForProcessRuntime } from '../../src/runtime/process/validation.js';
import { mountNamespaceProblem } from '../../src/runtime/process/mount-namespace.js';

const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const envMsg =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
const quantityMsg = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const initOnlyMsg = 'may not be set for init containers without restartPolicy=Always';

function base(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: {
      containers: [{ name: 'app', image: 'node:20-alpine', command: ['node', 'server.js'], ports: [{ name: 'http', containerPort: 8080 }] }],
    },
  };
}

type Fix = (p: Pod) => void;
const c0 = (p: Pod): Container => p.spec!.containers[0]!;
const sidecar = (extra: Partial<Container> = {}): Container => ({ name: 'side', image: 'busybox:1.36', command: ['sh'], restartPolicy: 'Always', ...extra });

const rows: [string, Fix, string[]][] = [
  ['a valid pod', () => {}, []],
  ['name required', (p) => delete p.metadata!.name, ['metadata.name: Required value: name or generateName is required']],
  ['name is a DNS-1123 subdomain', (p) => (p.metadata!.name = 'Web_1'), [`metadata.name: Invalid value: "Web_1": ${subdomainMsg}`]],
  ['name too long', (p) => (p.metadata!.name = 'a'.repeat(254)), [`metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`]],
  ['namespace is a DNS-1123 label', (p) => (p.metadata!.namespace = 'My-NS'), [`metadata.namespace: Invalid value: "My-NS": ${labelMsg}`]],
  ['namespace without dots', (p) => (p.metadata!.namespace = 'a.b'), ['metadata.namespace: Invalid value: "a.b": must not contain dots']],
  [
    'label value',
    (p) => (p.metadata!.labels = { app: 'bad value' }),
    [
      "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ],
  ],
  ['at least one container', (p) => (p.spec!.containers = []), ['spec.containers: Required value']],
  ['container name required', (p) => ((c0(p) as { name?: string }).name = ''), ['spec.containers[0].name: Required value']],
  ['container name is a DNS-1123 label', (p) => (c0(p).name = 'App'), [`spec.containers[0].name: Invalid value: "App": ${labelMsg}`]],
  [
    'container names unique',
    (p) => p.spec!.containers.push({ name: 'app', image: 'x:1', command: ['y'] }),
    ['spec.containers[1].name: Duplicate value: "app"'],
  ],
  [
    'names unique across init and regular',
    (p) => (p.spec!.initContainers = [{ name: 'app', image: 'x:1', command: ['y'] }]),
    ['spec.initContainers[0].name: Duplicate value: "app"'],
  ],
  ['image required', (p) => ((c0(p) as { image?: string }).image = undefined), ['spec.containers[0].image: Required value']],
  [
    'image without surrounding spaces',
    (p) => (c0(p).image = ' nginx'),
    ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace'],
  ],
  ['port names unique', (p) => c0(p).ports!.push({ name: 'http', containerPort: 8081 }), ['spec.containers[0].ports[1].name: Duplicate value: "http"']],
  [
    'port name charset and hyphens',
    (p) => (c0(p).ports![0]!.name = 'Http_port-'),
    [
      'spec.containers[0].ports[0].name: Invalid value: "Http_port-": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].ports[0].name: Invalid value: "Http_port-": must not begin or end with a hyphen',
    ],
  ],
  [
    'port name length',
    (p) => (c0(p).ports![0]!.name = 'a-very-long-port-name'),
    ['spec.containers[0].ports[0].name: Invalid value: "a-very-long-port-name": must be no more than 15 characters'],
  ],
  [
    'port name needs a letter',
    (p) => (c0(p).ports![0]!.name = '8080'),
    ['spec.containers[0].ports[0].name: Invalid value: "8080": must contain at least one letter (a-z)'],
  ],
  [
    'port name consecutive hyphens',
    (p) => (c0(p).ports![0]!.name = 'a--b'),
    ['spec.containers[0].ports[0].name: Invalid value: "a--b": must not contain consecutive hyphens'],
  ],
  ['containerPort required', (p) => (c0(p).ports![0]!.containerPort = 0), ['spec.containers[0].ports[0].containerPort: Required value']],
  [
    'containerPort range',
    (p) => (c0(p).ports![0]!.containerPort = 70000),
    ['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
  ],
  [
    'hostPort range',
    (p) => (c0(p).ports![0]!.hostPort = 70000),
    ['spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
  ],
  [
    'hostPort unique',
    (p) => {
      c0(p).ports![0]!.hostPort = 8080;
      p.spec!.containers.push({ name: 'b', image: 'x:1', command: ['y'], ports: [{ containerPort: 8081, hostPort: 8080 }] });
    },
    ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"'],
  ],
  [
    'protocol',
    (p) => (c0(p).ports![0]!.protocol = 'HTTP'),
    ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
  ],
  [
    'hostNetwork needs hostPort = containerPort',
    (p) => {
      p.spec!.hostNetwork = true;
      c0(p).ports![0]!.hostPort = 9090;
    },
    ['spec.containers[0].ports[0].containerPort: Invalid value: 8080: must match `hostPort` when `hostNetwork` is true'],
  ],
  ['env name', (p) => (c0(p).env = [{ name: '1BAD', value: 'x' }]), [`spec.containers[0].env[0].name: Invalid value: "1BAD": ${envMsg}`]],
  ['env name required', (p) => (c0(p).env = [{ name: '', value: 'x' }]), ['spec.containers[0].env[0].name: Required value']],
  [
    'env valueFrom needs a source',
    (p) => (c0(p).env = [{ name: 'A', valueFrom: {} }]),
    ['spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'],
  ],
  [
    'env value with valueFrom',
    (p) => (c0(p).env = [{ name: 'A', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }]),
    ['spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty'],
  ],
  [
    'env fieldRef path',
    (p) => (c0(p).env = [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }]),
    [
      'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.bogus": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"',
    ],
  ],
  [
    'env configMapKeyRef key required',
    (p) => (c0(p).env = [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: '' } } }]),
    ['spec.containers[0].env[0].valueFrom.configMapKeyRef.key: Required value'],
  ],
  [
    'envFrom needs a source',
    (p) => (c0(p).envFrom = [{ prefix: 'X_' }]),
    ['spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`'],
  ],
  [
    'imagePullPolicy',
    (p) => (c0(p).imagePullPolicy = 'Sometimes'),
    ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
  ],
  [
    'terminationMessagePolicy',
    (p) => (c0(p).terminationMessagePolicy = 'Stdout'),
    ['spec.containers[0].terminationMessagePolicy: Unsupported value: "Stdout": supported values: "File", "FallbackToLogsOnError"'],
  ],
  [
    'requests not above limits',
    (p) => (c0(p).resources = { limits: { cpu: '1' }, requests: { cpu: '2' } }),
    ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
  ],
  [
    'quantity grammar',
    (p) => (c0(p).resources = { requests: { cpu: '1.5.5' } }),
    [`spec.containers[0].resources.requests[cpu]: Invalid value: "1.5.5": ${quantityMsg}`],
  ],
  [
    'quantity non-negative',
    (p) => (c0(p).resources = { requests: { memory: '-128Mi' } }),
    ['spec.containers[0].resources.requests[memory]: Invalid value: "-128Mi": must be greater than or equal to 0'],
  ],
  [
    'resource name',
    (p) => (c0(p).resources = { limits: { gpu: '1' } }),
    [
      'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers',
      'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers',
    ],
  ],
  [
    'extended resources: requests equal limits',
    (p) => (c0(p).resources = { limits: { 'example.com/gpu': '2' }, requests: { 'example.com/gpu': '1' } }),
    ['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2'],
  ],
  [
    'volume mount needs a volume',
    (p) => (c0(p).volumeMounts = [{ name: 'data', mountPath: '/data' }]),
    ['spec.containers[0].volumeMounts[0].name: Not found: "data"'],
  ],
  [
    'restartPolicy',
    (p) => (p.spec!.restartPolicy = 'Sometimes'),
    ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
  ],
  [
    'activeDeadlineSeconds > 0',
    (p) => (p.spec!.activeDeadlineSeconds = 0),
    ['spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive'],
  ],
  [
    'dnsPolicy',
    (p) => (p.spec!.dnsPolicy = 'Cluster'),
    ['spec.dnsPolicy: Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'],
  ],
  [
    'ephemeral containers on create',
    (p) => (p.spec!.ephemeralContainers = [{ name: 'debug', image: 'busybox:1.36' }]),
    ['spec.ephemeralContainers: Forbidden: cannot be set on create'],
  ],
  // probes
  ['probe needs a handler', (p) => (c0(p).livenessProbe = {}), ['spec.containers[0].livenessProbe: Required value: must specify a handler type']],
  [
    'probe with two handlers',
    (p) => (c0(p).readinessProbe = { httpGet: { port: 8080 }, tcpSocket: { port: 8080 } }),
    ['spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type'],
  ],
  [
    'probe with three handlers',
    (p) => (c0(p).readinessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 8080 }, grpc: { port: 8080 } }),
    [
      'spec.containers[0].readinessProbe.grpc: Forbidden: may not specify more than 1 handler type',
      'spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type',
    ],
  ],
  ['exec command required', (p) => (c0(p).livenessProbe = { exec: { command: [] } }), ['spec.containers[0].livenessProbe.exec.command: Required value']],
  [
    'httpGet scheme',
    (p) => (c0(p).livenessProbe = { httpGet: { port: 8080, scheme: 'FTP' } }),
    ['spec.containers[0].livenessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"'],
  ],
  [
    'httpGet header name',
    (p) => (c0(p).livenessProbe = { httpGet: { port: 8080, httpHeaders: [{ name: 'X Bad', value: '1' }] } }),
    [
      "spec.containers[0].livenessProbe.httpGet.httpHeaders: Invalid value: \"X Bad\": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
    ],
  ],
  [
    'httpGet port number',
    (p) => (c0(p).livenessProbe = { httpGet: { port: 0 } }),
    ['spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive'],
  ],
  [
    'tcpSocket port name',
    (p) => (c0(p).livenessProbe = { tcpSocket: { port: 'HTTP' } }),
    [
      'spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: "HTTP": must contain at least one letter (a-z)',
    ],
  ],
  [
    'grpc port',
    (p) => (c0(p).startupProbe = { grpc: { port: 70000 } }),
    ['spec.containers[0].startupProbe.grpc.port: Invalid value: 70000: must be between 1 and 65535, inclusive'],
  ],
  [
    'probe numbers non-negative',
    (p) => (c0(p).readinessProbe = { tcpSocket: { port: 8080 }, initialDelaySeconds: -1, timeoutSeconds: -2, periodSeconds: -3, failureThreshold: -4 }),
    [
      'spec.containers[0].readinessProbe.failureThreshold: Invalid value: -4: must be greater than or equal to 0',
      'spec.containers[0].readinessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0',
      'spec.containers[0].readinessProbe.periodSeconds: Invalid value: -3: must be greater than or equal to 0',
      'spec.containers[0].readinessProbe.timeoutSeconds: Invalid value: -2: must be greater than or equal to 0',
    ],
  ],
  [
    'probe terminationGracePeriodSeconds > 0',
    (p) => (c0(p).livenessProbe = { tcpSocket: { port: 8080 }, terminationGracePeriodSeconds: 0 }),
    ['spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0'],
  ],
  [
    'liveness successThreshold 1',
    (p) => (c0(p).livenessProbe = { tcpSocket: { port: 8080 }, successThreshold: 2 }),
    ['spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'],
  ],
  [
    'startup successThreshold 1',
    (p) => (c0(p).startupProbe = { tcpSocket: { port: 8080 }, successThreshold: 3 }),
    ['spec.containers[0].startupProbe.successThreshold: Invalid value: 3: must be 1'],
  ],
  ['readiness successThreshold may be above 1', (p) => (c0(p).readinessProbe = { tcpSocket: { port: 8080 }, successThreshold: 3 }), []],
  [
    'readiness without terminationGracePeriodSeconds',
    (p) => (c0(p).readinessProbe = { tcpSocket: { port: 8080 }, terminationGracePeriodSeconds: 5 }),
    ['spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes'],
  ],
  // lifecycle
  [
    'lifecycle handler required',
    (p) => (c0(p).lifecycle = { postStart: {} }),
    ['spec.containers[0].lifecycle.postStart: Required value: must specify a handler type'],
  ],
  ['lifecycle tcpSocket passes validation', (p) => (c0(p).lifecycle = { postStart: { tcpSocket: { port: 8080 } } }), []],
  ['sleep of 0 is valid', (p) => (c0(p).lifecycle = { preStop: { sleep: { seconds: 0 } } }), []],
  [
    'sleep not negative',
    (p) => (c0(p).lifecycle = { preStop: { sleep: { seconds: -1 } } }),
    ['spec.containers[0].lifecycle.preStop.sleep: Invalid value: -1: must be non-negative and less than terminationGracePeriodSeconds (30)'],
  ],
  [
    'sleep within the grace period',
    (p) => {
      p.spec!.terminationGracePeriodSeconds = 10;
      c0(p).lifecycle = { preStop: { sleep: { seconds: 11 } } };
    },
    ['spec.containers[0].lifecycle.preStop.sleep: Invalid value: 11: must be non-negative and less than terminationGracePeriodSeconds (10)'],
  ],
  [
    'sleep with another handler',
    (p) => (c0(p).lifecycle = { preStop: { exec: { command: ['true'] }, sleep: { seconds: 1 } } }),
    ['spec.containers[0].lifecycle.preStop.sleep: Forbidden: may not specify more than 1 handler type'],
  ],
  [
    'stopSignal',
    (p) => (c0(p).lifecycle = { stopSignal: 'SIGFOO' }),
    [
      `spec.containers[0].lifecycle.stopSignal: Unsupported value: "SIGFOO": supported values: ${['SIGABRT', 'SIGALRM', 'SIGBUS', 'SIGCHLD', 'SIGCLD', 'SIGCONT', 'SIGFPE', 'SIGHUP', 'SIGILL', 'SIGINT', 'SIGIO', 'SIGIOT', 'SIGKILL', 'SIGPIPE', 'SIGPOLL', 'SIGPROF', 'SIGPWR', 'SIGQUIT', 'SIGSEGV', 'SIGSTKFLT', 'SIGSTOP', 'SIGSYS', 'SIGTERM', 'SIGTRAP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGURG', 'SIGUSR1', 'SIGUSR2', 'SIGVTALRM', 'SIGWINCH', 'SIGXCPU', 'SIGXFSZ'].map((s) => `"${s}"`).join(', ')}`,
    ],
  ],
  // container kinds
  [
    'restartPolicy only on init containers',
    (p) => (c0(p).restartPolicy = 'Always'),
    ['spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers'],
  ],
  [
    'init restartPolicy only Always',
    (p) => (p.spec!.initContainers = [sidecar({ restartPolicy: 'Never' })]),
    ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'],
  ],
  [
    'plain init containers have no probes or lifecycle',
    (p) =>
      (p.spec!.initContainers = [
        {
          name: 'init',
          image: 'busybox:1.36',
          command: ['true'],
          lifecycle: { postStart: { exec: { command: ['true'] } } },
          livenessProbe: { exec: { command: ['true'] } },
          readinessProbe: { exec: { command: ['true'] } },
          startupProbe: { exec: { command: ['true'] } },
        },
      ]),
    [
      `spec.initContainers[0].lifecycle: Forbidden: ${initOnlyMsg}`,
      `spec.initContainers[0].livenessProbe: Forbidden: ${initOnlyMsg}`,
      `spec.initContainers[0].readinessProbe: Forbidden: ${initOnlyMsg}`,
      `spec.initContainers[0].startupProbe: Forbidden: ${initOnlyMsg}`,
    ],
  ],
  [
    'sidecars may have probes and lifecycle',
    (p) => (p.spec!.initContainers = [sidecar({ readinessProbe: { exec: { command: ['true'] } }, lifecycle: { preStop: { sleep: { seconds: 1 } } } })]),
    [],
  ],
  [
    'sidecar probes are validated',
    (p) => (p.spec!.initContainers = [sidecar({ livenessProbe: { exec: { command: ['true'] }, successThreshold: 2 } })]),
    ['spec.initContainers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'],
  ],
  [
    'all errors at once, sorted by path',
    (p) => {
      p.spec!.restartPolicy = 'Sometimes';
      c0(p).image = '';
      p.metadata!.name = 'Bad_Name';
    },
    [
      `metadata.name: Invalid value: "Bad_Name": ${subdomainMsg}`,
      'spec.containers[0].image: Required value',
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ],
  ],
];

for (const [name, fix, want] of rows) {
  test(`validation: ${name}`, () => {
    const input = base();
    fix(input);
    const pod = defaultPod(input, { nodeName: 'node-1', source: 'file' });
    assert.deepEqual(validatePod(pod).map(formatFieldError), want);
  });
}

test('duplicate pods (same namespace and name) in one input', () => {
  const make = (ns?: string) => {
    const p = base();
    if (ns) p.metadata!.namespace = ns;
    return defaultPod(p, { nodeName: 'node-1', source: 'file' });
  };
  const errs = validatePods([make(), make('other'), make()]).map((l) => l.map(formatFieldError));
  assert.deepEqual(errs, [[], [], ['metadata.name: Duplicate value: "web"']]);
});

test('process runtime: command required and volumeDevices rejected, init containers too; volumeMounts kept where mount namespaces can be made', () => {
  const p = base();
  delete c0(p).command;
  p.spec!.volumes = [{ name: 'data', emptyDir: {} }];
  c0(p).volumeMounts = [{ name: 'data', mountPath: '/data' }];
  c0(p).volumeDevices = [{ name: 'data', devicePath: '/dev/xvda' }];
  p.spec!.initContainers = [{ name: 'init', image: 'busybox:1.36' }];
  const pod = defaultPod(p, { nodeName: 'node-1', source: 'file' });
  assert.deepEqual(validatePod(pod).map(formatFieldError), []);
  assert.deepEqual(validateForProcessRuntime(pod).map(formatFieldError), [
    'spec.containers[0].command: Required value: container "app" has no command: the process runtime runs the command on the host and cannot read the image\'s entrypoint; set command, or install containerd runc containernetworking-plugins and use --runtime=containerd',
    'spec.containers[0].volumeDevices: Forbidden: block devices are not supported by the process runtime; use --runtime=containerd',
    ...(mountNamespaceProblem()
      ? [`spec.containers[0].volumeMounts: Forbidden: not supported by the process runtime on this host: ${mountNamespaceProblem()}; use --runtime=containerd`]
      : []),
    'spec.initContainers[0].command: Required value: container "init" has no command: the process runtime runs the command on the host and cannot read the image\'s entrypoint; set command, or install containerd runc containernetworking-plugins and use --runtime=containerd',
  ]);
});
