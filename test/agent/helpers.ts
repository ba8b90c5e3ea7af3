// Shared pieces of the agent tests: HTTP over the agent's unix socket and pod manifests.

import { request } from 'node:http';
import type { Pod } from '../../src/api/types.js';

export interface Reply {
  status: number;
  body: string;
  json(): any;
}

export function call(socketPath: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(
      { socketPath, method, path, agent: false, headers: { ...(data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    // A refused upload (413) may close the connection while the body is still being written.
    req.on('socket', (s) => s.on('error', () => {}));
    if (data) req.write(data);
    req.end();
  });
}

export function shellPod(name: string, script: string, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'busybox', command: ['/bin/sh', '-c', script] }], ...extra },
  } as Pod;
}
