// The TCP side of the service proxy on real sockets: bytes relayed intact both ways (megabytes, so
// reads pause on a full peer and buffers change hands), half-close carried through in each direction,
// the next endpoint tried when a connect fails, and the endpoint's connection closed with the client's.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { RoundRobin, type Endpoint } from '../../src/proxy/balancer.js';
import { TcpListener } from '../../src/proxy/tcp-listener.js';
import { RealClock } from '../../src/util/clock.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function listening(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** A TcpListener on 127.0.0.1 and a free port forwarding to `endpoints`, closed when the test ends. */
async function proxyTo(t: { after(fn: () => void): void }, endpoints: Endpoint[]): Promise<number> {
  const rr = new RoundRobin(new RealClock());
  rr.setEndpoints(endpoints);
  const probe = createServer();
  const port = await listening(probe);
  await new Promise((r) => probe.close(r));
  const listener = new TcpListener('127.0.0.1', port, () => rr);
  await listener.listen();
  t.after(() => listener.close());
  return port;
}

function dial(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Everything a socket reads until its peer half-closes. */
function readAll(s: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.once('end', () => resolve(Buffer.concat(chunks)));
    s.once('error', reject);
  });
}

test('megabytes both ways arrive intact, and each half-close reaches the other side', async (t) => {
  // The endpoint reads until the client half-closes, then sends back its own bytes and the digest of what it read.
  const reply = randomBytes(6 * 1024 * 1024 + 123);
  const endpoint = createServer({ allowHalfOpen: true }, (c) => {
    void readAll(c).then((got) => {
      c.write(reply);
      c.end(`\n${sha(got)}`);
    });
  });
  const endpointPort = await listening(endpoint);
  t.after(() => endpoint.close());
  const port = await proxyTo(t, [{ ip: '127.0.0.1', port: endpointPort }]);

  const sent = randomBytes(8 * 1024 * 1024 + 7);
  const s = await dial(port);
  const answer = readAll(s);
  s.end(sent);
  const got = await answer;
  assert.equal(got.length, reply.length + 65, 'the reply and the digest');
  assert.equal(sha(got.subarray(0, reply.length)), sha(reply), 'the endpoint to client direction intact');
  assert.equal(got.subarray(reply.length + 1).toString(), sha(sent), 'the client to endpoint direction intact');
  await waitFor('the client connection closed after both halves ended', () => s.destroyed || s.closed);
});

test('a client that reads nothing holds the endpoint back, and nothing is lost when it reads', async (t) => {
  const data = randomBytes(64 * 1024 * 1024);
  let endpointSide: Socket | undefined;
  const endpoint = createServer({ allowHalfOpen: true }, (c) => {
    endpointSide = c;
    c.end(data);
  });
  const endpointPort = await listening(endpoint);
  t.after(() => endpoint.close());
  const port = await proxyTo(t, [{ ip: '127.0.0.1', port: endpointPort }]);
  const s = await dial(port);
  s.pause();
  // The proxy stops reading the endpoint rather than holding the 64 MB itself: the endpoint's writes stay queued.
  await waitFor('the endpoint accepted the relayed connection', () => endpointSide);
  await holdsFor('the endpoint held back while the client reads nothing', () => endpointSide!.writableLength > 0, 300);
  const got = readAll(s);
  s.resume();
  s.end();
  assert.equal(sha(await got), sha(data));
});

test('a connect that fails goes to the next endpoint', async (t) => {
  const closed = createServer();
  const closedPort = await listening(closed);
  await new Promise((r) => closed.close(r));
  const live = createServer((c) => c.end('live'));
  const livePort = await listening(live);
  t.after(() => live.close());
  const port = await proxyTo(t, [
    { ip: '127.0.0.1', port: closedPort },
    { ip: '127.0.0.1', port: livePort },
  ]);
  for (let i = 0; i < 4; i++) {
    const s = await dial(port);
    s.end();
    assert.equal((await readAll(s)).toString(), 'live', `connection ${i}`);
  }
});

test('no endpoint: the connection is closed; a client that goes away closes the endpoint side', async (t) => {
  const none = await proxyTo(t, []);
  const s = await dial(none);
  await waitFor('the connection closed with no endpoint', () => s.destroyed || s.readableEnded || s.closed);

  let endpointSide: Socket | undefined;
  const endpoint = createServer((c) => {
    endpointSide = c;
    c.on('error', () => {});
  });
  const endpointPort = await listening(endpoint);
  t.after(() => endpoint.close());
  const port = await proxyTo(t, [{ ip: '127.0.0.1', port: endpointPort }]);
  const c = await dial(port);
  await waitFor('the endpoint accepted the relayed connection', () => endpointSide);
  c.destroy();
  await waitFor('the endpoint side closed', () => endpointSide!.closed || endpointSide!.readableEnded);
});
