// The gRPC prober against real @grpc/grpc-js servers with grpc-health-check's HealthImplementation
// (SERVING, NOT_SERVING, an unknown service, a closed port, a server without the health service) and
// against plain node:http2 servers: what goes on the wire, and no connection left behind.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { HealthImplementation } from 'grpc-health-check';
import { createRequire } from 'node:module';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { GRPCHealthProber } from '../../src/prober/grpc.js';
import { holdsFor, waitFor } from '../fixtures/wait.js';

/** The health.proto shipped with grpc-health-check, for a server built by hand. */
function healthProtoPath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('grpc-health-check/package.json')), 'proto', 'health', 'v1', 'health.proto');
}

const prober = new GRPCHealthProber('kube-probe/1.35');
const servers: grpc.Server[] = [];
after(() => servers.forEach((s) => s.forceShutdown()));

async function start(setup: (s: grpc.Server) => void): Promise<number> {
  const server = new grpc.Server();
  setup(server);
  servers.push(server);
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
}

test('a health server: SERVING, NOT_SERVING, unknown service', async () => {
  const health = new HealthImplementation({ '': 'SERVING', down: 'NOT_SERVING', unknown: 'UNKNOWN' });
  const port = await start((s) => health.addToServer(s));
  const cases: [string, 'success' | 'failure', string][] = [
    ['', 'success', 'service healthy'],
    ['down', 'failure', 'service unhealthy (responded with "NOT_SERVING")'],
    ['unknown', 'failure', 'service unhealthy (responded with "UNKNOWN")'],
    ['nosuch', 'failure', 'error: health rpc probe failed: rpc error: code = NotFound desc = Health status unknown for service nosuch'],
  ];
  for (const [service, result, output] of cases) {
    assert.deepEqual(await prober.probe('127.0.0.1', service, port, 1), { result, output }, `service ${JSON.stringify(service)}`);
  }
});

test('a closed port fails after the dial deadline', async () => {
  const port = await start(() => {});
  servers.pop()!.forceShutdown();
  assert.deepEqual(await prober.probe('127.0.0.1', '', port, 1), {
    result: 'failure',
    output: `timeout: failed to connect service "127.0.0.1:${port}" within 1s: context deadline exceeded`,
  });
});

test('a server without the health service is Unimplemented', async () => {
  const port = await start(() => {});
  const out = await prober.probe('127.0.0.1', '', port, 1);
  assert.equal(out.result, 'failure');
  assert.match(out.output, /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): .*grpc\.health\.v1\.Health\/Check/);
});

test('the call carries the kube-probe User-Agent; a Check that never answers times out', async () => {
  const def = protoLoader.loadSync(healthProtoPath(), { keepCase: true, enums: String, defaults: true });
  const svc = (grpc.loadPackageDefinition(def) as any).grpc.health.v1.Health.service as grpc.ServiceDefinition;
  const agents: string[] = [];
  const port = await start((s) =>
    s.addService(svc, {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        agents.push(String(call.metadata.get('user-agent')[0]));
        if (call.request.service === 'hang') return; // never answers
        cb(null, { status: 'SERVING' });
      },
      Watch: () => {},
      List: (_c: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, { statuses: {} }),
    }),
  );
  assert.deepEqual(await prober.probe('127.0.0.1', '', port, 1), { result: 'success', output: 'service healthy' });
  assert.match(agents[0]!, /^kube-probe\/1\.35/);
  assert.deepEqual(await prober.probe('127.0.0.1', 'hang', port, 1), { result: 'failure', output: 'timeout: health rpc did not complete within 1s' });
});

/** A node:http2 server counting its open sessions; close() waits for them, as a graceful shutdown does. */
async function http2Server(onStream: (s: http2.ServerHttp2Stream, h: http2.IncomingHttpHeaders) => void, port = 0) {
  const server = http2.createServer();
  const open = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  server.on('stream', onStream);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { server, open, port: (server.address() as net.AddressInfo).port };
}

const serving = (stream: http2.ServerHttp2Stream) => {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]));
};

test('no connection outlives a probe: failed probes before the server starts, probes while it runs, a graceful close at once', async () => {
  const free = await http2Server(() => {});
  const port = free.port;
  await new Promise<void>((r) => free.server.close(() => r()));
  // Refused while nothing listens, retried until the deadline.
  const refused = await Promise.all([1, 2, 3].map(() => prober.probe('127.0.0.1', '', port, 1)));
  for (const r of refused) assert.equal(r.result, 'failure');
  const s = await http2Server((stream) => stream.on('end', () => serving(stream)).resume(), port);
  for (let i = 0; i < 5; i++) assert.deepEqual(await prober.probe('127.0.0.1', '', port, 1), { result: 'success', output: 'service healthy' });
  try {
    await waitFor("the probes' sessions closed", () => s.open.size === 0);
    // Longer than a reconnect back-off: nothing left from the refused probes may connect now.
    await holdsFor('no session opened by a refused probe retrying', () => s.open.size === 0, 2500);
  } finally {
    for (const session of s.open) session.destroy();
    await new Promise<void>((r) => s.server.close(() => r()));
  }
});

test('a server that accepts but never speaks HTTP/2 fails the dial at the deadline; a plain HTTP/2 404 is Unimplemented', async () => {
  const silent = net.createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const silentPort = (silent.address() as net.AddressInfo).port;
  assert.deepEqual(await prober.probe('127.0.0.1', '', silentPort, 1), {
    result: 'failure',
    output: `timeout: failed to connect service "127.0.0.1:${silentPort}" within 1s: context deadline exceeded`,
  });
  silent.close();

  const web = await http2Server((stream) => stream.respond({ ':status': 404, 'content-type': 'text/plain' }, { endStream: true }));
  assert.deepEqual(await prober.probe('127.0.0.1', '', web.port, 1), {
    result: 'failure',
    output:
      'error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unexpected HTTP status code received from server: 404 (Not Found); transport: received unexpected content-type "text/plain"',
  });
  web.server.close();
});

test('the request is the service name framed as gRPC; a grpc-message is percent-decoded', async () => {
  let seen: Buffer | undefined;
  const s = await http2Server((stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      seen = Buffer.concat(chunks);
      assert.equal(headers['content-type'], 'application/grpc');
      assert.equal(headers[':path'], '/grpc.health.v1.Health/Check');
      assert.match(String(headers['grpc-timeout']), /^\d{1,8}[mSMH]$/);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '5', 'grpc-message': 'no%20such%20service' }, { endStream: true });
    });
  });
  assert.deepEqual(await prober.probe('127.0.0.1', 'café', s.port, 1), {
    result: 'failure',
    output: 'error: health rpc probe failed: rpc error: code = NotFound desc = no such service',
  });
  const name = Buffer.from('café');
  assert.deepEqual(seen, Buffer.concat([Buffer.from([0, 0, 0, 0, 2 + name.length, 0x0a, name.length]), name]));
  s.server.close();
});
