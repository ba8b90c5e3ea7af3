// Watch lines gathered in one turn of the event loop: many changes published at once reach the
// client as complete NDJSON lines, in order, none lost, and the lines still pending when
// timeoutSeconds ends the watch are written before the end.

import assert from 'node:assert/strict';
import { get } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { MemoryBackend } from './memory-backend.js';
import { startApiServer, type ApiServer } from './harness.js';

const COUNT = 400;

function readWatch(port: number, path: string, onOpen: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path }, (res) => {
      assert.equal(res.statusCode, 200);
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
      res.on('error', reject);
      onOpen();
    });
    req.on('error', reject);
  });
}

describe('watch framing under a burst of changes', () => {
  let backend: MemoryBackend;
  let api: ApiServer;
  const names: string[] = [];

  before(async () => {
    backend = new MemoryBackend();
    api = await startApiServer(backend);
    for (let i = 0; i < COUNT; i++) {
      const name = `burst-${i}`;
      names.push(name);
      await backend.createPod({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default' },
        spec: { containers: [{ name: 'main', image: 'busybox' }] },
      } as Pod);
    }
  });
  after(async () => {
    await api?.close();
  });

  test('every change in one turn arrives as its own line, in order, before the timeout ends the stream', async () => {
    const from = backend.listPods().resourceVersion;
    const body = await readWatch(api.port, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${from}&timeoutSeconds=1`, () => {
      // All in one synchronous loop: more than one batch's worth of lines.
      for (const name of names) {
        const status = structuredClone(backend.pods.get(`default/${name}`)!.status!);
        status.containerStatuses![0]!.restartCount = 1;
        backend.setStatus('default', name, status);
      }
    });
    assert.ok(body.length > 64 * 1024, `the burst is ${body.length} bytes`);
    assert.ok(body.endsWith('\n'));
    const lines = body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: Pod });
    assert.equal(lines.length, COUNT);
    assert.deepEqual(
      lines.map((l) => l.object.metadata?.name),
      names,
    );
    assert.ok(lines.every((l) => l.type === 'MODIFIED' && l.object.kind === 'Pod' && l.object.status?.containerStatuses?.[0]?.restartCount === 1));
    const rvs = lines.map((l) => Number(l.object.metadata?.resourceVersion));
    assert.deepEqual(
      rvs,
      [...rvs].sort((a, b) => a - b),
    );
  });

  test('a timeoutSeconds past the 2^31-1 ms setTimeout honours keeps the watch open', async () => {
    const from = backend.listPods().resourceVersion;
    // 3,000,000 s is past the 24.8 days setTimeout honours: a raw timer would end the watch within 1 ms.
    const outcome = await new Promise<string>((resolve, reject) => {
      const req = get(
        { host: '127.0.0.1', port: api.port, path: `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${from}&timeoutSeconds=3000000` },
        (res) => {
          assert.equal(res.statusCode, 200);
          res.setEncoding('utf8');
          let body = '';
          res.on('data', (c: string) => {
            body += c;
            if (body.includes('\n')) {
              resolve(body);
              req.destroy();
            }
          });
          res.on('end', () => resolve(`the watch ended with ${JSON.stringify(body)}`));
          res.on('error', () => {});
          // Changed 50 ms after the response opened, well past the 1 ms a clamped timer would have left.
          setTimeout(() => {
            const status = structuredClone(backend.pods.get(`default/${names[0]}`)!.status!);
            status.containerStatuses![0]!.restartCount = 2;
            backend.setStatus('default', names[0]!, status);
          }, 50);
        },
      );
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    assert.match(outcome, /"type":"MODIFIED"/);
  });

  test('an ERROR for a too-old resourceVersion is written before the stream ends', async () => {
    backend.oldestRV = 50_000;
    try {
      const body = await readWatch(api.port, '/api/v1/pods?watch=1&resourceVersion=5', () => {});
      const lines = body
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: { code?: number; reason?: string } });
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.type, 'ERROR');
      assert.equal(lines[0]!.object.code, 410);
    } finally {
      backend.oldestRV = 0;
    }
  });
});
