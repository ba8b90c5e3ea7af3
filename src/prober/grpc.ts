// The grpc probe (§5.6): grpc.health.v1.Health/Check over plaintext with @grpc/grpc-js, one deadline
// for the (blocking) dial and the call, and the kubelet's outcome messages. The health.proto shipped
// with grpc-health-check is loaded once per prober, and the gRPC stack itself only on the first gRPC
// probe. Each probe opens its own channel with a private subchannel pool and closes it afterwards, so
// no connection outlives the probe (as the kubelet's dial-per-probe does) and a restarted server is
// always reached afresh.

import type grpc from '@grpc/grpc-js';
import { createRequire } from 'node:module';
import path from 'node:path';
import { dialHost, joinHostPort, type ActionOutcome } from './probe.js';
import { formatGoDuration, goQuote } from '../util/go-format.js';
import { maxTimerDelayMs } from '../util/timer.js';

interface HealthCheckResponse {
  status: string;
}

type HealthClient = grpc.Client & {
  Check(
    req: { service: string },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: HealthCheckResponse) => void,
  ): grpc.ClientUnaryCall;
};

/** gRPC status codes as Go's codes.Code String() spells them. */
const codeNames: Record<number, string> = {
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
};

/** Path of the health.proto shipped with grpc-health-check. */
export function healthProtoPath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('grpc-health-check/package.json')), 'proto', 'health', 'v1', 'health.proto');
}

interface GRPCStack {
  grpc: typeof grpc;
  Health: grpc.ServiceClientConstructor;
}

/** grpc-js, proto-loader and the Health service definition, imported and built on first use. */
async function loadGRPCStack(): Promise<GRPCStack> {
  const [{ default: grpcjs }, { default: protoLoader }] = await Promise.all([import('@grpc/grpc-js'), import('@grpc/proto-loader')]);
  const def = protoLoader.loadSync(healthProtoPath(), { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const pkg = grpcjs.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
  };
  return { grpc: grpcjs, Health: pkg.grpc.health.v1.Health };
}

/**
 * Closes a probe's channel without leaving a connection behind. grpc-js keeps a subchannel that is
 * in TRANSIENT_FAILURE (its reconnect back-off) when the channel closes, and that subchannel still
 * connects when the back-off ends, holding an HTTP/2 session open that nothing uses (a server then
 * waits for it on graceful shutdown). Closing only once the channel has left TRANSIENT_FAILURE lets
 * grpc-js shut an in-flight connection down as it completes.
 */
function closeWhenSettled(stack: GRPCStack, client: grpc.Client): void {
  const channel = client.getChannel();
  const TRANSIENT_FAILURE = stack.grpc.connectivityState.TRANSIENT_FAILURE;
  const state = channel.getConnectivityState(false);
  if (state !== TRANSIENT_FAILURE) {
    client.close();
    return;
  }
  channel.watchConnectivityState(state, Infinity, () => closeWhenSettled(stack, client));
}

export class GRPCHealthProber {
  private stack: Promise<GRPCStack> | undefined;

  constructor(private readonly userAgent: string) {}

  async probe(host: string, service: string, port: number, timeoutSeconds: number): Promise<ActionOutcome> {
    const addr = joinHostPort(host, port);
    const timeout = formatGoDuration(timeoutSeconds * 1000);
    let stack: GRPCStack;
    try {
      stack = await (this.stack ??= loadGRPCStack());
    } catch (err) {
      this.stack = undefined;
      return { result: 'unknown', output: '', error: err as Error };
    }
    const { grpc: grpcjs } = stack;
    // grpc-js deadlines are wall-clock dates; this is network I/O, not logic under test clocks.
    const deadline = new Date(Date.now() + timeoutSeconds * 1000);
    let client: HealthClient;
    try {
      client = new stack.Health(joinHostPort(dialHost(host), port), grpcjs.credentials.createInsecure(), {
        'grpc.primary_user_agent': this.userAgent,
        'grpc.use_local_subchannel_pool': 1,
        'grpc.enable_retries': 0,
        'grpc.service_config_disable_resolution': 1,
      }) as unknown as HealthClient;
    } catch (err) {
      return Promise.resolve({ result: 'failure', output: `error: failed to connect service at ${goQuote(addr)}: ${(err as Error).message}` });
    }
    return new Promise((resolve) => {
      const done = (outcome: ActionOutcome) => {
        closeWhenSettled(stack, client);
        resolve(outcome);
      };
      // A blocking dial: wait for the channel to be ready, retrying connects until the deadline.
      // grpc-js arms one setTimeout for this deadline: beyond what a timer holds, wait unbounded.
      client.waitForReady(timeoutSeconds * 1000 > maxTimerDelayMs ? Infinity : deadline, (dialErr) => {
        if (dialErr) {
          done({ result: 'failure', output: `timeout: failed to connect service ${goQuote(addr)} within ${timeout}: context deadline exceeded` });
          return;
        }
        client.Check({ service }, new grpcjs.Metadata(), { deadline }, (err, res) => {
          if (err) {
            done({ result: 'failure', output: rpcErrorText(err, timeout) });
            return;
          }
          const status = res?.status ?? 'UNKNOWN';
          if (status !== 'SERVING') {
            done({ result: 'failure', output: `service unhealthy (responded with ${goQuote(status)})` });
            return;
          }
          done({ result: 'success', output: 'service healthy' });
        });
      });
    });
  }
}

function rpcErrorText(err: grpc.ServiceError, timeout: string): string {
  switch (err.code) {
    case 12: // UNIMPLEMENTED
      return `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`;
    case 4: // DEADLINE_EXCEEDED
      return `timeout: health rpc did not complete within ${timeout}`;
    default:
      return `error: health rpc probe failed: rpc error: code = ${codeNames[err.code] ?? `Code(${err.code})`} desc = ${err.details}`;
  }
}
