// The TCP prober against a real listening socket: success, and the refused text.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { FakeClock } from '../../src/util/clock.js';
import { doTCPProbe } from '../../src/prober/tcp.js';

const clock = new FakeClock();

test('an open port is success with no output; a closed one fails as Go says', async () => {
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted++;
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  assert.deepEqual(await doTCPProbe('127.0.0.1', port, 1, clock), { result: 'success', output: '' });
  await new Promise<void>((r) => server.close(() => r()));
  assert.equal(accepted, 1);
  assert.deepEqual(await doTCPProbe('127.0.0.1', port, 1, clock), {
    result: 'failure',
    output: `dial tcp 127.0.0.1:${port}: connect: connection refused`,
  });
});

test('an unreachable address fails with a dial error or an i/o timeout', async () => {
  // TEST-NET-1: either unroutable here (an immediate error) or silently dropped (the timeout).
  const probing = doTCPProbe('192.0.2.1', 81, 1, clock);
  await clock.advance(1000);
  const out = await probing;
  assert.equal(out.result, 'failure');
  assert.match(out.output, /^dial tcp 192\.0\.2\.1:81: (i\/o timeout|connect: .+)$/);
});
