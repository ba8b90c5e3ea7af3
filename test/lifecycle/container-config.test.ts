// buildContainerConfig: command/args expansion, HOSTNAME, working dir, log path, labels and
// annotations, stop signal, config errors, and the container hash used in back-off keys.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { buildContainerConfig, ContainerConfigError, hashContainer, type BuildContainerConfigInput } from '../../src/lifecycle/container-config.js';

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
    { name: 'command and args', command: ['/bin/serve'], args: ['--port=$(PORT)', '--name', '$(NAME)'], want: [['/bin/serve'], ['--port=8080', '--name', 'web']] },
    { name: 'escaped and unresolved', command: ['sh', '-c', 'echo $$(GREETING) $(MISSING) $HOME'], want: [['sh', '-c', 'echo $(GREETING) $(MISSING) $HOME'], []] },
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
    { name: 'pod name first', container: { name: 'app', env: [{ name: 'A', value: '1' }] }, want: [{ key: 'HOSTNAME', value: 'web' }, { key: 'A', value: '1' }] },
    { name: 'spec.hostname', container: { name: 'app' }, spec: { hostname: 'custom' }, want: [{ key: 'HOSTNAME', value: 'custom' }] },
    { name: 'pod env wins', container: { name: 'app', env: [{ name: 'HOSTNAME', value: 'mine' }] }, want: [{ key: 'HOSTNAME', value: 'mine' }] },
    {
      name: 'not visible to expansion',
      container: { name: 'app', env: [{ name: 'H', value: '$(HOSTNAME)' }] },
      want: [{ key: 'HOSTNAME', value: 'web' }, { key: 'H', value: '$(HOSTNAME)' }],
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
