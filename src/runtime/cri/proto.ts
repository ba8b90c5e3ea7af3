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
}

/** The runtime.v1 services, loaded on first use. */
export function loadCriServices(): CriServices {
  const def = protoLoader.loadSync(protoPath(), PROTO_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { runtime: { v1: CriServices } };
  return pkg.runtime.v1;
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
