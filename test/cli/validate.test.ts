// `podvisor validate` through the built executable (exit codes, stdout, stderr) and in-process
// through main() with an injected io.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { main } from '../../src/cli/main.js';
import { runInProcess } from '../fixtures/cli/in-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));

function podvisor(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, input, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const inProcess = (args: string[], stdinText = '') => runInProcess(main, args, root, stdinText);

test('valid manifests: one line per object, exit 0', () => {
  const r = podvisor(['validate', '-f', 'examples/web.yaml', '-f', 'test/fixtures/list.yaml']);
  assert.equal(r.stderr, '');
  assert.equal(r.stdout, 'pod/web validated\npod/one validated\npod/two validated\n');
  assert.equal(r.code, 0);
});

test('ConfigMaps and Secrets beside the pods are checked, each with its line', () => {
  const r = podvisor(['validate', '--filename=test/fixtures/multi.yaml']);
  assert.equal(r.stdout, 'configmap/settings validated\nsecret/token validated\npod/app validated\n');
  assert.equal(r.code, 0);
});

test('validate reads as the API reads: generateName, the same object twice in a directory, a removed version', () => {
  const dir = mkdtempSync(join(tmpdir(), 'validate-'));
  try {
    const job =
      'apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: hook-}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox, command: ["true"]}]\n';
    writeFileSync(join(dir, 'a.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {v: "1"}\n---\n${job}`);
    writeFileSync(join(dir, 'b.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {v: "2"}\n');
    const r = podvisor(['validate', '-f', dir]);
    assert.deepEqual(
      [r.code, r.stdout, r.stderr],
      [
        0,
        'configmap/cfg validated\nconfigmap/cfg validated\njob.batch/hook- validated\n',
        'Warning: configmap/cfg is defined more than once: each is applied in turn, the last one wins\n',
      ],
    );
    const cron =
      'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: "@daily"\n  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox, command: ["true"]}]}}}}\n';
    const old = podvisor(['validate', '-f', '-'], cron);
    assert.deepEqual(
      [old.code, old.stdout, old.stderr],
      [
        2,
        '',
        'error: unable to recognize "STDIN": STDIN:1:1: document 0: no matches for kind "CronJob" in version "batch/v1beta1": podvisor reads CronJob in batch/v1 (batch/v1beta1 CronJob was removed in Kubernetes 1.25; set apiVersion: batch/v1)\n',
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('invalid input: every error on stderr, kubectl style, exit 2, nothing on stdout', () => {
  const r = podvisor(['validate', '-f', 'test/fixtures/invalid.yaml']);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(
    r.stderr,
    'The Pod "web" is invalid: \n' +
      '* spec.containers[0].image: Required value\n' +
      '* spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive\n' +
      '* spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"\n' +
      'The Pod "other" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1\n',
  );
});

test('unknown field: strict fails, warn warns and succeeds, ignore is silent', () => {
  const msg =
    'test/fixtures/typo.yaml:13:7: spec.containers[0].livenessProbe.initialDelaySecond: unknown field "initialDelaySecond" (did you mean "initialDelaySeconds"?)';
  const strict = podvisor(['validate', '-f', 'test/fixtures/typo.yaml']);
  assert.deepEqual([strict.code, strict.stdout, strict.stderr], [2, '', `error: ${msg}\n`]);
  const warn = podvisor(['validate', '-f', 'test/fixtures/typo.yaml', '--validate=warn']);
  assert.deepEqual([warn.code, warn.stdout, warn.stderr], [0, 'pod/typo validated\n', `Warning: ${msg}\n`]);
  const ignore = podvisor(['validate', '-f', 'test/fixtures/typo.yaml', '--validate', 'ignore']);
  assert.deepEqual([ignore.code, ignore.stdout, ignore.stderr], [0, 'pod/typo validated\n', '']);
});

test('stdin with -f -', () => {
  const r = podvisor(['validate', '-f', '-'], readFileSync(`${root}/examples/job.yaml`, 'utf8'));
  assert.deepEqual([r.code, r.stdout], [0, 'pod/report-job validated\n']);
});

test('-o yaml prints the defaulted object; several objects as a v1 List', () => {
  const one = podvisor(['validate', '-f', 'examples/web.yaml', '-o', 'yaml', '--node-name', 'node-1']);
  assert.equal(one.code, 0);
  const pod = parse(one.stdout);
  assert.equal(pod.kind, 'Pod');
  assert.equal(pod.spec.nodeName, 'node-1');
  assert.equal(pod.spec.containers[0].livenessProbe.timeoutSeconds, 1);
  const many = podvisor(['validate', '-f', 'test/fixtures/list.yaml', '-ojson']);
  const list = JSON.parse(many.stdout);
  assert.equal(list.kind, 'List');
  assert.equal(list.apiVersion, 'v1');
  assert.deepEqual(
    list.items.map((p: { metadata: { name: string } }) => p.metadata.name),
    ['one', 'two'],
  );
});

test('-n sets the namespace of objects without one and rejects a mismatch', () => {
  const ok = podvisor(['validate', '-f', 'test/fixtures/list.yaml', '-n', 'shop', '-o', 'json']);
  assert.equal(ok.code, 0);
  assert.deepEqual(
    JSON.parse(ok.stdout).items.map((p: { metadata: { namespace: string } }) => p.metadata.namespace),
    ['shop', 'shop'],
  );
  const yaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: prod}\nspec:\n  containers: [{name: c, image: "x:1"}]\n';
  const bad = podvisor(['validate', '-f', '-', '--namespace=shop'], yaml);
  assert.deepEqual(
    [bad.code, bad.stderr],
    [
      2,
      'error: STDIN:3:32: the namespace from the provided object "prod" does not match the namespace "shop". You must pass \'--namespace=prod\' to perform this operation.\n',
    ],
  );
});

test('--runtime=process applies the process runtime rules', () => {
  const yaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: "nginx:1.25"}]\n';
  assert.equal(podvisor(['validate', '-f', '-'], yaml).code, 0);
  const r = podvisor(['validate', '-f', '-', '--runtime=process'], yaml);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^The Pod "p" is invalid: spec\.containers\[0\]\.command: Required value: container "c" has no command: the process runtime/);
});

test('--runtime=process judges every workload template as a pod: no command refused (exit 2), fields it does not apply warned', () => {
  const deployment = (container: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      securityContext: {fsGroup: 2000}\n      containers: [${container}]\n`;
  const cron =
    'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: "@daily"\n  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}}}}\n';
  const refused = podvisor(['validate', '-f', '-', '--runtime=process'], `${deployment('{name: web, image: nginx}')}---\n${cron}`);
  const fix =
    "the process runtime runs the command on the host and cannot read the image's entrypoint; set command, or install containerd runc containernetworking-plugins and use --runtime=containerd";
  assert.deepEqual(
    [refused.code, refused.stdout, refused.stderr],
    [
      2,
      '',
      `The Deployment "web" is invalid: spec.template.spec.containers[0].command: Required value: container "web" has no command: ${fix}\n` +
        `The CronJob "nightly" is invalid: spec.jobTemplate.spec.template.spec.containers[0].command: Required value: container "main" has no command: ${fix}\n`,
    ],
  );
  // The containerd runtime runs the image's entrypoint.
  assert.equal(podvisor(['validate', '-f', '-', '--runtime=containerd'], `${deployment('{name: web, image: nginx}')}---\n${cron}`).code, 0);

  const unapplied = '{name: web, image: nginx, command: [sleep, "9"], securityContext: {readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}}';
  const warned = podvisor(['validate', '-f', '-', '--runtime=process'], deployment(unapplied));
  const why = 'not honoured by the process runtime: the process runtime runs host processes without namespaces or security profiles; use --runtime=containerd';
  assert.deepEqual(
    [warned.code, warned.stdout, warned.stderr],
    [
      0,
      'deployment.apps/web validated\n',
      `Warning: deployment.apps/web: spec.template.spec.securityContext.fsGroup: ${why}\n` +
        `Warning: deployment.apps/web: spec.template.spec.containers[0].securityContext.capabilities: ${why}\n` +
        `Warning: deployment.apps/web: spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem: ${why}\n`,
    ],
  );
});

test('usage errors exit 2 with a hint', () => {
  const unknown = podvisor(['validate', '--bogus']);
  assert.deepEqual([unknown.code, unknown.stderr], [2, "error: unknown flag: --bogus\nSee 'podvisor validate --help' for usage.\n"]);
  const noFile = podvisor(['validate']);
  assert.equal(noFile.code, 2);
  const badMode = podvisor(['validate', '-f', 'examples/web.yaml', '--validate=maybe']);
  assert.equal(badMode.code, 2);
  assert.match(badMode.stderr, /invalid argument "maybe" for "--validate" flag: must be one of: strict, warn, ignore/);
  const badCommand = podvisor(['frobnicate']);
  assert.deepEqual([badCommand.code, badCommand.stderr], [2, 'error: unknown command "frobnicate" for "podvisor"\nSee \'podvisor --help\' for usage.\n']);
});

test('--help, COMMAND --help and --version', () => {
  const help = podvisor(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Commands:$/m);
  assert.match(help.stdout, /^ {2}validate +Check manifests/m);
  const cmdHelp = podvisor(['validate', '--help']);
  assert.equal(cmdHelp.code, 0);
  assert.match(cmdHelp.stdout, /-f, --filename FILE/);
  assert.match(cmdHelp.stdout, /podvisor validate -f FILENAME\.\.\. \[flags\]/);
  const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { version: string };
  const version = podvisor(['--version']);
  assert.deepEqual([version.code, version.stdout], [0, `podvisor ${pkg.version}\n`]);
});

test('in-process through main() with an injected io', async () => {
  const ok = await inProcess(['validate', '-f', '-'], readFileSync(`${root}/examples/crashloop.yaml`, 'utf8'));
  assert.deepEqual(ok, { code: 0, stdout: 'pod/crashloop validated\n', stderr: '' });
  const bad = await inProcess(['validate', '-f', 'test/fixtures/syntax-error.yaml']);
  assert.deepEqual(bad, {
    code: 2,
    stdout: '',
    stderr: 'error: test/fixtures/syntax-error.yaml:9:1: Flow sequence in block collection must be sufficiently indented and end with a ]\n',
  });
});

test('a reader that goes away (`| head`) ends the output quietly: exit 0, no error', async () => {
  // The read end of stdout is closed before the command starts, so its first write meets EPIPE.
  const child = spawn(process.execPath, [bin, 'validate', '-f', 'examples/', '-o', 'yaml'], {
    cwd: fileURLToPath(new URL('../../../', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'close')) as [number | null];
  assert.equal(code, 0, stderr);
  assert.equal(stderr, '');
});
