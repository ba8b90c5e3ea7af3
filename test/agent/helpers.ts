// Shared pieces of the agent tests: HTTP over the agent's unix socket and pod manifests.

import { request } from 'node:http';
import type { Pod } from '../../src/api/types.js';
import { pod, shell } from '../fixtures/pods.js';

export interface Reply {
  status: number;
  body: string;
  json(): any;
  headers: import('node:http').IncomingHttpHeaders;
}

export function call(socketPath: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(
      {
        socketPath,
        method,
        path,
        agent: false,
        headers: { ...(data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text, json: () => JSON.parse(text), headers: res.headers });
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

/** A pod of one container, main, running `/bin/sh -c script`. */
export function shellPod(name: string, script: string, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return pod(name, [shell('main', script)], { terminationGracePeriodSeconds: 5, ...extra });
}
