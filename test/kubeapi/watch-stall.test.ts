// Watchers that never read: each may leave a bounded amount unread before the server closes it (as
// kube-apiserver closes a watcher whose buffer is full), so stalled clients cannot make the server
// buffer every event; a watcher that reads gets every event.

import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { MAX_UNREAD_WATCH_BYTES } from '../../src/kubeapi/watch.js';
import { waitFor } from '../fixtures/wait.js';
import { startApiServer, type ApiServer } from './harness.js';
import { MemoryBackend } from './memory-backend.js';

const UPDATES = 300;
const POD_BYTES = 200 * 1024;

/** A raw watch request; the socket is paused at once (a stalled client) unless told to read. */
function openWatch(port: number): Socket {
  const s = connect(port, '127.0.0.1');
  s.write('GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n');
  return s;
}

describe('stalled watchers', () => {
  let backend: MemoryBackend;
  let api: ApiServer;
  before(async () => {
    backend = new MemoryBackend();
    api = await startApiServer(backend);
  });
  after(async () => {
    await api.close();
  });

  test(`${UPDATES} updates of a ${POD_BYTES / 1024} KB pod: stalled watchers are closed after a bounded backlog, a reader gets every event`, async () => {
    const big = 'x'.repeat(POD_BYTES);
    let pod = await backend.createPod({
      metadata: { name: 'big', namespace: 'default', annotations: { big } },
      spec: { containers: [{ name: 'app', image: 'nginx' }] },
    } as Pod);
    const stalled = [openWatch(api.port), openWatch(api.port), openWatch(api.port)];
    for (const s of stalled) s.pause();
    const reader = openWatch(api.port);
    let readerText = '';
    reader.on('data', (d: Buffer) => (readerText += d.toString('latin1')));
    await waitFor('the reader is watching', () => readerText.includes('"ADDED"'));

    for (let i = 0; i < UPDATES; i++) {
      pod = await backend.updatePod({ ...pod, metadata: { ...pod.metadata, labels: { n: String(i) } } });
      // Let the server's writes happen between updates, as they would between requests.
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitFor(`the reader got all ${UPDATES} updates`, () => readerText.split('"MODIFIED"').length - 1 === UPDATES, 60_000);

    // Each stalled client now reads what was kept for it: a bounded backlog, then the end.
    const received = stalled.map((s) => {
      const seen = { bytes: 0, closed: false };
      s.on('data', (d: Buffer) => (seen.bytes += d.length));
      s.once('close', () => (seen.closed = true));
      s.resume();
      return seen;
    });
    const closed = await waitFor('the server closed every stalled watcher', () => received.every((r) => r.closed), 20_000).then(
      () => true,
      () => false,
    );
    for (const s of stalled) s.destroy();
    assert.ok(closed, `stalled watchers still open after reading ${received.map((r) => r.bytes).join(', ')} bytes`);
    const all = UPDATES * POD_BYTES;
    for (const { bytes: n } of received) {
      assert.ok(n < MAX_UNREAD_WATCH_BYTES + 8 * 1024 * 1024, `a stalled watcher was sent ${n} bytes of ${all}: its backlog was not bounded`);
    }
    reader.destroy();
  });
});
