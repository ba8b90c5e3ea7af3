// The gRPC prober against real @grpc/grpc-js servers with grpc-health-check's HealthImplementation:
// SERVING, NOT_SERVING, an unknown service, a closed port, a server without the health service.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { HealthImplementation } from 'grpc-health-check';
import { GRPCHealthProber, healthProtoPath } from '../../src/prober/grpc.js';

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
