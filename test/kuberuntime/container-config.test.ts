// buildContainerConfig: command/args expansion, HOSTNAME, working dir, log path, labels and
// annotations, stop signal, config errors, and the container hash used in back-off keys.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import {
  buildContainerConfig,
  ContainerConfigError,
  hashContainer,
  podHostname,
  type BuildContainerConfigInput,
} from '../../src/kuberuntime/container-config.js';
import { podSandboxConfig } from '../../src/kuberuntime/sandbox.js';

function input(container: Container, podOver: Partial<NonNullable<Pod['spec']>> = {}, attempt = 0): BuildContainerConfigInput {
  return {
    pod: {
      metadata: { name: 'web', namespace: 'prod', uid: 'uid-7' },
      spec: { containers: [container], ...podOver },
    },
    container,
    attempt,
    sandboxDir: '/state/sandboxes/uid-7',
    podIP: '127.0.0.1',
    hostIP: '127.0.0.1',
    lookup: {
      configMap: (ns, name) => (ns === 'prod' && name === 'cfg' ? { metadata: { name }, data: { PORT: '8080' } } : undefined),
      secret: () => undefined,
    },
  };
}

test('command and args: $(VAR) expanded against the final environment', async (t) => {
  const env = [
    { name: 'GREETING', value: 'hello' },
    { name: 'PORT', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'PORT' } } },
    { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ];
  const cases: Array<{ name: string; command?: string[]; args?: string[]; want: [string[], string[]] }> = [
    { name: 'command only', command: ['echo', '$(GREETING)'], want: [['echo', 'hello'], []] },
    {
      name: 'command and args',
      command: ['/bin/serve'],
      args: ['--port=$(PORT)', '--name', '$(NAME)'],
      want: [['/bin/serve'], ['--port=8080', '--name', 'web']],
    },
    {
      name: 'escaped and unresolved',
      command: ['sh', '-c', 'echo $$(GREETING) $(MISSING) $HOME'],
      want: [['sh', '-c', 'echo $(GREETING) $(MISSING) $HOME'], []],
    },
    { name: 'args only', args: ['$(GREETING)'], want: [[], ['hello']] },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const cfg = buildContainerConfig(input({ name: 'app', image: 'img', command: c.command, args: c.args, env }));
      assert.deepEqual([cfg.command, cfg.args], c.want);
    });
  }
});

test('HOSTNAME: the pod name, spec.hostname when set, the pod env when it defines one', async (t) => {
  const cases: Array<{ name: string; container: Container; spec?: Partial<NonNullable<Pod['spec']>>; want: Array<{ key: string; value: string }> }> = [
    {
      name: 'pod name first',
      container: { name: 'app', env: [{ name: 'A', value: '1' }] },
      want: [
        { key: 'HOSTNAME', value: 'web' },
        { key: 'A', value: '1' },
      ],
    },
    { name: 'spec.hostname', container: { name: 'app' }, spec: { hostname: 'custom' }, want: [{ key: 'HOSTNAME', value: 'custom' }] },
    { name: 'pod env wins', container: { name: 'app', env: [{ name: 'HOSTNAME', value: 'mine' }] }, want: [{ key: 'HOSTNAME', value: 'mine' }] },
    {
      name: 'not visible to expansion',
      container: { name: 'app', env: [{ name: 'H', value: '$(HOSTNAME)' }] },
      want: [
        { key: 'HOSTNAME', value: 'web' },
        { key: 'H', value: '$(HOSTNAME)' },
      ],
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.deepEqual(buildContainerConfig(input(c.container, c.spec)).envs, c.want));
  }
});

test('working dir, log path, metadata, labels, annotations, stop signal', () => {
  const container: Container = { name: 'app', image: 'img:1', command: ['run'], lifecycle: { stopSignal: 'SIGUSR1' } };
  const cfg = buildContainerConfig(input(container, {}, 3));
  assert.equal(cfg.workingDir, '/state/sandboxes/uid-7');
  assert.equal(cfg.logPath, 'app/3.log');
  assert.deepEqual(cfg.metadata, { name: 'app', attempt: 3 });
  assert.equal(cfg.image, 'img:1');
  assert.equal(cfg.stopSignal, 'SIGUSR1');
  assert.deepEqual(cfg.labels, {
    'io.kubernetes.pod.name': 'web',
    'io.kubernetes.pod.namespace': 'prod',
    'io.kubernetes.pod.uid': 'uid-7',
    'io.kubernetes.container.name': 'app',
  });
  assert.equal(cfg.annotations['io.kubernetes.container.hash'], hashContainer(container));
  assert.equal(cfg.annotations['io.kubernetes.container.restartCount'], '3');

  const explicit = buildContainerConfig(input({ name: 'app', command: ['run'], workingDir: '/srv' }));
  assert.equal(explicit.workingDir, '/srv');
  assert.equal(explicit.stopSignal, undefined);
});

test('unresolvable references throw ContainerConfigError', () => {
  assert.throws(
    () => buildContainerConfig(input({ name: 'app', command: ['x'], envFrom: [{ configMapRef: { name: 'app-config' } }] })),
    (err: unknown) => err instanceof ContainerConfigError && err.message === 'configmap "app-config" not found',
  );
});

test('hashContainer: hex, stable across key order, changes with the spec', () => {
  const a: Container = { name: 'app', image: 'img', command: ['a', 'b'], env: [{ name: 'X', value: '1' }] };
  const sameReordered = { env: [{ value: '1', name: 'X' }], command: ['a', 'b'], image: 'img', name: 'app' } as Container;
  assert.match(hashContainer(a), /^[0-9a-f]{1,8}$/);
  assert.equal(hashContainer(a), hashContainer(sameReordered));
  assert.notEqual(hashContainer(a), hashContainer({ ...a, image: 'img:2' }));
  assert.notEqual(hashContainer(a), hashContainer({ ...a, command: ['a'] }));
});

test("an env expansion bomb fails at the first value past execve's limit, with the variable named", () => {
  // Each level multiplies by 64: unbounded, D would be 1 KiB × 64³ = 256 MiB.
  const refs = (name: string) => `$(${name})`.repeat(64);
  const env = [
    { name: 'A', value: 'x'.repeat(1024) },
    { name: 'B', value: refs('A') },
    { name: 'C', value: refs('B') },
    { name: 'D', value: refs('C') },
  ];
  const before = process.memoryUsage().rss;
  assert.throws(
    () => buildContainerConfig(input({ name: 'app', image: 'img', command: ['true'], env })),
    (err: Error) =>
      err instanceof ContainerConfigError &&
      err.message === 'environment variable "C" expands to more than 131072 bytes, the most one variable or argument can hold (the kernel\'s MAX_ARG_STRLEN)',
  );
  assert.ok(process.memoryUsage().rss - before < 64 * 1024 * 1024);
});

test('command and total size: an argument or an environment execve would refuse is a config error', () => {
  const big = { name: 'A', value: 'x'.repeat(100_000) };
  assert.throws(() => buildContainerConfig(input({ name: 'app', image: 'img', command: ['echo', '$(A)$(A)'], env: [big] })), {
    message: /^command\[1\] expands to more than 131072 bytes/,
  });
  const many = Array.from({ length: 30 }, (_, i) => ({ name: `V${i}`, value: 'y'.repeat(100_000) }));
  assert.throws(() => buildContainerConfig(input({ name: 'app', image: 'img', command: ['true'], env: many })), {
    message: /^the environment and command line take \d+ bytes, more than the 2097152 a process can be started with \(argument list too long\)$/,
  });
  // Within the limits: fine.
  assert.equal(buildContainerConfig(input({ name: 'app', image: 'img', command: ['echo', '$(A)'], env: [big] })).command[1]!.length, 100_000);
});

test('linux config: limits become cgroup settings as the kubelet converts them; runAsNonRoot is checked', () => {
  const cfg = buildContainerConfig(
    input(
      { name: 'app', image: 'img', command: ['true'], resources: { limits: { memory: '64Mi', cpu: '250m' } }, securityContext: { runAsUser: 1000 } },
      {
        securityContext: { runAsGroup: 2000, supplementalGroups: [3000] },
      },
    ),
  );
  assert.deepEqual(cfg.linux, {
    // Limits only: requests default to them, so the pod is Guaranteed (OOM score adjustment -997).
    resources: { cpuPeriod: 100000, cpuQuota: 25000, cpuShares: 256, memoryLimitInBytes: 67108864, oomScoreAdj: -997 },
    securityContext: {
      namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
      runAsUser: 1000,
      runAsGroup: 2000,
      supplementalGroups: [3000],
    },
  });
  const nonRoot = (sc: Container['securityContext']) => () =>
    buildContainerConfig({ ...input({ name: 'app', image: 'img', command: ['true'], securityContext: sc }), imageUid: 0 });
  assert.throws(nonRoot({ runAsNonRoot: true }), {
    message: /^container has runAsNonRoot and image will run as root \(pod: "web_prod\([^)]*\)", container: app\)$/,
  });
  assert.throws(nonRoot({ runAsNonRoot: true, runAsUser: 0 }), {
    message: /^container's runAsUser breaks non-root policy \(pod: "web_prod\([^)]*\)", container: app\)$/,
  });
  assert.doesNotThrow(nonRoot({ runAsNonRoot: true, runAsUser: 65534 }));
});

test('hostname: a pod name past 63 characters is cut as truncatePodHostnameIfNeeded, without a trailing - or .', () => {
  const long = (name: string): Pod => ({ metadata: { name, namespace: 'prod', uid: 'uid-7' }, spec: { containers: [{ name: 'app' }] } });
  const cases: Array<{ name: string; want: string }> = [
    { name: 'a'.repeat(63), want: 'a'.repeat(63) },
    { name: 'a'.repeat(64), want: 'a'.repeat(63) },
    { name: `${'b'.repeat(61)}--x-tail`, want: 'b'.repeat(61) },
    { name: `${'c'.repeat(62)}.d`, want: 'c'.repeat(62) },
  ];
  for (const c of cases) {
    assert.equal(podHostname(long(c.name)), c.want, c.name);
    assert.equal(podSandboxConfig(long(c.name), '/state').hostname, c.want, c.name);
  }
  const env = buildContainerConfig({ ...input({ name: 'app' }), pod: long('x'.repeat(100)) }).envs;
  assert.deepEqual(env, [{ key: 'HOSTNAME', value: 'x'.repeat(63) }]);
});
