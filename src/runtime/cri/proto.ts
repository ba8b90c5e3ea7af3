// Loads podvisor's CRI v1 proto (api.proto, next to this module's source) once, for the gRPC client
// and server: int64 as decimal strings (CRI timestamps are nanoseconds, beyond 2^53), enums as names.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const PROTO_LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

/** api.proto beside this module (a copied build) or in the source tree (dist/src/… → src/…). */
export function protoPath(): string {
  const candidates = [new URL('./api.proto', import.meta.url), new URL('../../../../src/runtime/cri/api.proto', import.meta.url)];
  for (const url of candidates) {
    const p = fileURLToPath(url);
    if (existsSync(p)) return p;
  }
  throw new Error('CRI api.proto not found');
}

export interface CriServices {
  RuntimeService: grpc.ServiceClientConstructor;
  ImageService: grpc.ServiceClientConstructor;
  /** Every message type of the package, in the proto's order (for warmCodecs). */
  messageTypes: readonly protoLoader.MessageTypeDefinition<object, object>[];
}

/** The runtime.v1 services, loaded on first use. */
export function loadCriServices(): CriServices {
  const def = protoLoader.loadSync(protoPath(), PROTO_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { runtime: { v1: Omit<CriServices, 'messageTypes'> } };
  const messageTypes = Object.values(def).filter(
    (d): d is protoLoader.MessageTypeDefinition<object, object> => 'format' in d && d.format === 'Protocol Buffer 3 DescriptorProto',
  );
  return { RuntimeService: pkg.runtime.v1.RuntimeService, ImageService: pkg.runtime.v1.ImageService, messageTypes };
}

/**
 * protobufjs generates a message type's encoder and decoder on the type's first use: about 20 ms
 * for the types of one CreateContainer request, 65 ms for the whole package, which a long-lived
 * client or server would otherwise pay on its first pod's start. This generates them ahead, a few
 * types per turn of the event loop (the proto's order is the order a pod start uses them), on
 * unref'd timers, so that it never holds a process open. Returns a function that stops it.
 */
export function warmCodecs(types: CriServices['messageTypes'], perTurn = 4): () => void {
  let next = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const turn = () => {
    for (const end = Math.min(next + perTurn, types.length); next < end && !stopped; next++) {
      const t = types[next]!;
      t.deserialize(t.serialize({}));
    }
    if (next < types.length && !stopped) timer = setTimeout(turn, 0).unref();
  };
  timer = setTimeout(turn, 0).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * The gRPC target of a CRI endpoint, as the kubelet's --container-runtime-endpoint takes it:
 * `unix:///abs/path` (or a bare absolute path). Only unix sockets are accepted.
 */
export function criTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) {
    const path = endpoint.slice('unix://'.length);
    if (!path.startsWith('/')) throw new Error(`invalid CRI endpoint ${JSON.stringify(endpoint)}: the socket path must be absolute (unix:///path)`);
    return `unix://${path}`;
  }
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new Error(`invalid CRI endpoint ${JSON.stringify(endpoint)}: only unix:///path sockets are supported`);
}

/** The socket path of a unix endpoint. */
export function socketPathOf(endpoint: string): string {
  return criTarget(endpoint).slice('unix://'.length);
}
