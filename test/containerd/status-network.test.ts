// containerd: container statuses as the runtime reports them (OOMKilled, exit codes, termination
// messages, a read-only root filesystem, config errors), probes to the pod IP, hostPort from the
// host, pod-to-pod traffic over pod IPs and a pod on the host's network.

import assert from 'node:assert/strict';
import { get } from 'node:http';
import { test } from 'node:test';
import { condition, containerStatus, describe, makePod, statusOf, waitFor } from '../kubelet/harness.js';
import { containerdSuite, freePort, type ContainerdEnv } from './harness.js';
import { newContainerdHarness } from './kubelet.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

const terminated = (h: Awaited<ReturnType<typeof newContainerdHarness>>, pod: ReturnType<typeof makePod>, name: string) =>
  containerStatus(h, pod, name)?.state?.terminated;

test('exit codes, OOMKilled, termination messages and a read-only root filesystem, as containerd reports them', { skip }, async () => {
  const h = await newContainerdHarness(env);
  try {
    const pod = makePod(
      'ends',
      [
        { name: 'oom', image: 'busybox', command: ['dd', 'if=/dev/zero', 'of=/dev/null', 'bs=200M', 'count=1'], resources: { limits: { memory: '32Mi' } } },
        { name: 'message', image: 'busybox', command: ['sh', '-c', 'printf "bye from file" > /dev/termination-log; exit 3'] },
        {
          name: 'custom-path',
          image: 'busybox',
          command: ['sh', '-c', 'echo -n custom > /tmp/why; exit 4'],
          terminationMessagePath: '/tmp/why',
        },
        {
          name: 'readonly',
          image: 'busybox',
          command: ['sh', '-c', 'echo noise; touch /written-here'],
          securityContext: { readOnlyRootFilesystem: true },
          terminationMessagePolicy: 'FallbackToLogsOnError',
        },
        { name: 'fine', image: 'busybox', command: ['sh', '-c', 'touch /tmp/x && exit 0'], terminationMessagePolicy: 'FallbackToLogsOnError' },
      ],
      { restartPolicy: 'Never' },
    );
    h.kubelet.startPod(pod);
    await waitFor(
      () => `the pod Failed: ${describe(h, pod)}`,
      () => statusOf(h, pod)?.phase === 'Failed',
      60_000,
    );
    const oom = terminated(h, pod, 'oom')!;
    assert.equal(oom.reason, 'OOMKilled', describe(h, pod));
    assert.equal(oom.exitCode, 137);
    const msg = terminated(h, pod, 'message')!;
    assert.deepEqual([msg.exitCode, msg.reason, msg.message], [3, 'Error', 'bye from file']);
    assert.equal(terminated(h, pod, 'custom-path')!.message, 'custom');
    const ro = terminated(h, pod, 'readonly')!;
    assert.equal(ro.exitCode, 1);
    // The tail of the log, both streams (their order between streams is the runtime's).
    assert.match(ro.message ?? '', /touch: \/written-here: Read-only file system\n/, describe(h, pod));
    assert.match(ro.message ?? '', /^noise$/m);
    const fine = terminated(h, pod, 'fine')!;
    assert.deepEqual([fine.exitCode, fine.reason, fine.message], [0, 'Completed', undefined]);
    assert.ok(oom.startedAt && oom.finishedAt && oom.containerID?.startsWith('containerd://'));
  } finally {
    await h.close();
  }
});

test('runAsNonRoot against a root image is CreateContainerConfigError; a missing executable fails the start', { skip }, async () => {
  const h = await newContainerdHarness(env);
  try {
    const pod = makePod(
      'config-errors',
      [
        { name: 'nonroot', image: 'busybox', command: ['sleep', '3600'], securityContext: { runAsNonRoot: true } },
        { name: 'noexec', image: 'busybox', command: ['/no/such/binary'] },
      ],
      { restartPolicy: 'Never' },
    );
    h.kubelet.startPod(pod);
    const w = await waitFor(
      () => `nonroot waiting in CreateContainerConfigError: ${describe(h, pod)}`,
      () => {
        const s = containerStatus(h, pod, 'nonroot')?.state?.waiting;
        return s?.reason === 'CreateContainerConfigError' ? s : undefined;
      },
    );
    assert.match(w.message ?? '', /^container has runAsNonRoot and image will run as root/);
    const t = await waitFor(
      () => `noexec terminated: ${describe(h, pod)}`,
      () => terminated(h, pod, 'noexec'),
    );
    assert.notEqual(t.exitCode, 0, describe(h, pod));
    assert.match(t.message ?? '', /no such file or directory/, describe(h, pod));
  } finally {
    await h.close();
  }
});

test('probes reach the pod IP; hostPort is reached from the host; pods talk over pod IPs', { skip }, async () => {
  const h = await newContainerdHarness(env);
  try {
    const hostPort = await freePort();
    const web = makePod('web', [
      {
        name: 'httpd',
        image: 'web',
        ports: [{ containerPort: 8080, hostPort }],
        readinessProbe: { httpGet: { path: '/index.html', port: 8080 }, periodSeconds: 1 },
        livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
        startupProbe: { exec: { command: ['test', '-f', '/www/index.html'] }, periodSeconds: 1 },
      },
    ]);
    h.kubelet.startPod(web);
    await waitFor(
      () => `web Ready: ${describe(h, web)}`,
      () => condition(h, web, 'Ready') === 'True',
      60_000,
    );
    const ip = statusOf(h, web)!.podIP!;
    assert.match(ip, /^10\.123\.\d+\.\d+$/);
    const res = await httpGet(`http://127.0.0.1:${hostPort}/index.html`);
    assert.deepEqual(res, { status: 200, body: 'hello-from-pod\n' });

    const client = makePod(
      'client',
      [{ name: 'wget', image: 'busybox', command: ['sh', '-c', `wget -qO- http://${ip}:8080/index.html > /dev/termination-log`] }],
      {
        restartPolicy: 'Never',
      },
    );
    h.kubelet.startPod(client);
    await waitFor(
      () => `the client Succeeded: ${describe(h, client)}`,
      () => statusOf(h, client)?.phase === 'Succeeded',
      60_000,
    );
    assert.equal(terminated(h, client, 'wget')!.message, 'hello-from-pod\n');
    assert.notEqual(statusOf(h, client)!.podIP, ip);
  } finally {
    await h.close();
  }
});

test('a pod on the host network has the host address; its probes go to the host', { skip }, async () => {
  const h = await newContainerdHarness(env);
  try {
    const port = await freePort();
    const pod = makePod(
      'hostnet',
      [
        {
          name: 'httpd',
          image: 'web',
          command: ['httpd', '-f', '-p', `127.0.0.1:${port}`, '-h', '/www'],
          ports: [{ containerPort: port }],
          readinessProbe: { httpGet: { path: '/', port }, periodSeconds: 1 },
        },
      ],
      { hostNetwork: true },
    );
    h.kubelet.startPod(pod);
    await waitFor(
      () => `the pod Ready: ${describe(h, pod)}`,
      () => condition(h, pod, 'Ready') === 'True',
      60_000,
    );
    assert.equal(statusOf(h, pod)!.podIP, '127.0.0.1');
    assert.equal((await httpGet(`http://127.0.0.1:${port}/`)).body, 'hello-from-pod\n');
  } finally {
    await h.close();
  }
});
