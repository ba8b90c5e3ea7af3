// Pods for the Service tests: each runs a small HTTP server on the host (the process runtime's host
// network) answering its own name, its readiness an exec probe on a flag file the test creates and
// removes, and a named container port `http` so a Service's targetPort resolves per pod.

import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { pod, shell } from '../fixtures/pods.js';

export function webPod(name: string, port: number, flagDir: string, labels: Record<string, string> = { app: 'web' }): Pod {
  const server = `require('http').createServer((q, s) => s.end(process.env.POD)).listen(${port}, '127.0.0.1')`;
  return pod(
    name,
    [
      shell('main', `exec node -e "${server}"`, {
        env: [{ name: 'POD', value: name }],
        ports: [{ name: 'http', containerPort: port }],
        readinessProbe: { exec: { command: ['test', '-f', join(flagDir, `${name}.ready`)] }, periodSeconds: 1, failureThreshold: 1 },
      }),
    ],
    { terminationGracePeriodSeconds: 1 },
    { labels },
  );
}
