// The describe printer's pieces: kubectl's probe descriptions, and a pod's layout without an agent.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { describePod, describeProbe } from '../../src/printers/describe-pod.js';

test('describeProbe words probes as kubectl', () => {
  const attrs = { initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
  assert.equal(
    describeProbe({ ...attrs, httpGet: { path: '/healthz', port: 8080 } }),
    'http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3',
  );
  assert.equal(
    describeProbe({ ...attrs, exec: { command: ['cat', '/tmp/ready'] } }),
    'exec [cat /tmp/ready] delay=0s timeout=1s period=10s #success=1 #failure=3',
  );
  assert.equal(describeProbe({ ...attrs, tcpSocket: { port: 5432 } }), 'tcp-socket :5432 delay=0s timeout=1s period=10s #success=1 #failure=3');
});

test('describePod: a terminated last state, env sources, mounts, volumes, no events', () => {
  const pod = {
    metadata: { name: 'job', namespace: 'default', labels: {} },
    spec: {
      nodeName: 'host',
      containers: [
        {
          name: 'main',
          image: 'busybox',
          env: [
            { name: 'A', value: 'x' },
            { name: 'S', valueFrom: { secretKeyRef: { name: 'creds', key: 'p', optional: true } } },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
    status: {
      phase: 'Running',
      hostIP: '10.0.0.1',
      qosClass: 'BestEffort',
      containerStatuses: [
        {
          name: 'main',
          ready: false,
          restartCount: 2,
          image: 'busybox',
          imageID: '',
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: '2024-01-01T00:00:00Z', finishedAt: '2024-01-01T00:00:01Z' } },
        },
      ],
    },
  } as unknown as Pod;
  const out = describePod(pod, [], Date.parse('2024-01-01T00:01:00Z'));
  assert.match(out, /^Node: {9}host\/10\.0\.0\.1$/m);
  assert.match(out, /^ {4}State: {10}Waiting\n {6}Reason: {7}CrashLoopBackOff\n {4}Last State: {5}Terminated\n {6}Reason: {7}Error\n {6}Exit Code: {4}1\n/m);
  assert.match(out, /^ {4}Restart Count: {2}2$/m);
  assert.match(out, /^ {6}A: {2}x\n {6}S: {2}<set to the key 'p' in secret 'creds'> {2}Optional: true$/m);
  assert.match(out, /^ {6}\/data from data \(ro\)$/m);
  assert.match(out, /^ {4}Type: +EmptyDir \(a temporary directory that shares a pod's lifetime\)$/m);
  assert.match(out, /^Events: +<none>\n$/m);
});
