// gRPC and HTTP probes on containerd to servers inside containers on their own pod network, reached
// at the pod IP: the node test image's dependency-free gRPC health server (SERVING / NOT_SERVING)
// and its HTTP server; a serving container becomes Ready and is never restarted, a failing one is.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Probe } from '../../src/api/types.js';
import { condition, containerStatus, describe, eventsOf, makePod, probeCount, statusOf, waitFor, withPods } from '../kubelet/harness.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';
import { NODE_IMAGE_PORT } from './images.js';
import { newContainerdHarness } from './kubelet.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));

function probe(handler: Partial<Probe>, over: Partial<Probe> = {}): Probe {
  return { periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 1, ...handler, ...over };
}

const node = process.execPath;
const port = NODE_IMAGE_PORT;

/** Whether ip lies in the /24 the test's pod network hands out. */
const inPodNetwork = (ip: string | undefined) => !!ip && ip.startsWith(env.podCIDR.replace(/0\/24$/, ''));

test('gRPC and HTTP probes reach servers in containers at the pod IP', { skip }, async () => {
  const h = await newContainerdHarness(env);
  const grpcOk = makePod(
    'grpc-ok',
    [
      {
        name: 'app',
        image: 'node',
        startupProbe: probe({ grpc: { port } }, { failureThreshold: 30 }),
        readinessProbe: probe({ grpc: { port } }),
        livenessProbe: probe({ grpc: { port, service: 'anything' } }),
      },
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  const grpcBad = makePod(
    'grpc-not-serving',
    [
      {
        name: 'app',
        image: 'node',
        command: ['sh', '-c', `touch /tmp/not-serving; exec ${node} /app/grpc-health.js`],
        env: [{ name: 'NOT_SERVING_FILE', value: '/tmp/not-serving' }],
        // Liveness starts once the server listens, so its first failure is the server's answer
        // and not a connection that a loaded machine could not make within the timeout.
        startupProbe: probe({ tcpSocket: { port } }, { failureThreshold: 30 }),
        livenessProbe: probe({ grpc: { port } }, { timeoutSeconds: 5 }),
      },
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  const httpOk = makePod(
    'http-ok',
    [
      {
        name: 'app',
        image: 'node',
        command: [node, '/app/http-health.js'],
        startupProbe: probe({ httpGet: { path: '/healthz', port } }, { failureThreshold: 30 }),
        readinessProbe: probe({ httpGet: { path: '/healthz', port: 'web' } }),
        livenessProbe: probe({ httpGet: { path: '/healthz', port } }),
        ports: [{ name: 'web', containerPort: port }],
      },
    ],
    { terminationGracePeriodSeconds: 2 },
  );
  const httpBad = makePod(
    'http-missing',
    [
      {
        name: 'app',
        image: 'node',
        command: [node, '/app/http-health.js'],
        startupProbe: probe({ tcpSocket: { port } }, { failureThreshold: 30 }),
        livenessProbe: probe({ httpGet: { path: '/missing', port } }, { timeoutSeconds: 5 }),
      },
    ],
    { terminationGracePeriodSeconds: 2 },
  );

  await withPods(h, [grpcOk, grpcBad, httpOk, httpBad], async () => {
    await Promise.all([
      ...[grpcOk, httpOk].map(async (pod) => {
        await waitFor(
          () => `the pod Ready: ${describe(h, pod)}`,
          () => condition(h, pod, 'Ready') === 'True',
          60_000,
        );
        await waitFor(
          () => `three successful liveness probes: ${describe(h, pod)}`,
          async () => (await probeCount(h, pod, 'app', 'Liveness', 'successful')) >= 3,
          30_000,
        );
        assert.ok(inPodNetwork(statusOf(h, pod)!.podIP), `pod IP in ${env.podCIDR}: ${describe(h, pod)}`);
        assert.equal(await probeCount(h, pod, 'app', 'Liveness', 'failed'), 0);
        assert.equal(await probeCount(h, pod, 'app', 'Readiness', 'failed'), 0);
        assert.equal(containerStatus(h, pod, 'app')!.restartCount, 0);
        assert.equal(eventsOf(h, pod, 'Killing').length, 0);
      }),
      ...[
        { pod: grpcBad, message: /^Liveness probe failed: service unhealthy \(responded with "NOT_SERVING"\)$/ },
        { pod: httpBad, message: /^Liveness probe failed: HTTP probe failed with statuscode: 404$/ },
      ].map(async ({ pod, message }) => {
        await waitFor(
          () => `a restart by the liveness probe: ${describe(h, pod)}`,
          () => (containerStatus(h, pod, 'app')?.restartCount ?? 0) >= 1,
          60_000,
        );
        assert.ok(inPodNetwork(statusOf(h, pod)!.podIP), describe(h, pod));
        // A startup probe refused while the server was still starting reports Unhealthy too, first.
        const liveness = eventsOf(h, pod, 'Unhealthy').find((e) => e.message?.startsWith('Liveness probe failed'));
        assert.match(liveness?.message ?? describe(h, pod), message);
        assert.equal(eventsOf(h, pod, 'Killing')[0]!.message, 'Container app failed liveness probe, will be restarted');
      }),
    ]);
  });
});
