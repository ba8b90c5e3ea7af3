// Any RuntimeService as a CRI v1 gRPC server (runtime.v1.RuntimeService and ImageService) on a unix
// socket, so CRI clients — podvisor's own, crictl, a kubelet — can drive it.

import { chmod, mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CAPABILITIES_INFO_KEY, noRuntimeForHandler, NotFoundError, UnsupportedError, type RuntimeService } from '../cri.js';
import type { Logger } from '../../util/logger.js';
import {
  containerConfigFromWire,
  containerEventToWire,
  containerFilterFromWire,
  containerItemToWire,
  containerStatusToWire,
  imageSpecFromWire,
  imageToWire,
  int64,
  authFromWire,
  msToNs,
  sandboxConfigFromWire,
  sandboxFilterFromWire,
  sandboxItemToWire,
  sandboxStatusToWire,
  type Wire,
} from './convert.js';
import { loadCriServices, socketPathOf, warmCodecs } from './proto.js';

/** An error whose gRPC status is given (INVALID_ARGUMENT for a malformed request). */
export class CriStatusError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
    this.name = 'CriStatusError';
  }
}

function invalid(message: string): CriStatusError {
  return new CriStatusError(grpc.status.INVALID_ARGUMENT, message);
}

function requireId(v: unknown, field: string): string {
  if (typeof v !== 'string' || v === '') throw invalid(`${field} must be set`);
  return v;
}

function toStatus(err: unknown): Partial<grpc.StatusObject> {
  if (err instanceof CriStatusError) return { code: err.code, details: err.message };
  if (err instanceof NotFoundError) return { code: grpc.status.NOT_FOUND, details: err.message };
  if (err instanceof UnsupportedError) return { code: grpc.status.UNIMPLEMENTED, details: err.message };
  return { code: grpc.status.UNKNOWN, details: err instanceof Error ? err.message : String(err) };
}

type Handler = (req: Wire) => Promise<Wire>;

function unary(logger: Logger, method: string, fn: Handler): grpc.handleUnaryCall<Wire, Wire> {
  return (call, callback) => {
    fn(call.request ?? {}).then(
      (res) => callback(null, res),
      (err) => {
        const st = toStatus(err);
        if (st.code === grpc.status.UNKNOWN) logger.warn('CRI call failed', { method, err: String(err) });
        callback(st);
      },
    );
  };
}

function unimplemented(what: string, why = 'is not supported by this runtime'): Handler {
  return async () => {
    throw new CriStatusError(grpc.status.UNIMPLEMENTED, `${what} ${why}`);
  };
}

/** The RuntimeService and ImageService handlers over a runtime. */
export function criHandlers(runtime: RuntimeService, logger: Logger): { runtime: grpc.UntypedServiceImplementation; image: grpc.UntypedServiceImplementation } {
  const rt: Record<string, Handler> = {
    Version: async () => {
      const v = await runtime.version();
      return { version: '0.1.0', runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion, runtimeApiVersion: 'v1' };
    },
    // verbose: what the runtime is (its capabilities), read by clients once when they connect.
    Status: async (req) => ({
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          { type: 'NetworkReady', status: true, reason: '', message: '' },
        ],
      },
      info: req.verbose ? { [CAPABILITIES_INFO_KEY]: JSON.stringify(runtime.capabilities) } : {},
    }),
    UpdateRuntimeConfig: async () => ({}),

    RunPodSandbox: async (req) => {
      if (!req.config) throw invalid('config must be set');
      const config = sandboxConfigFromWire(req.config);
      if (!config.metadata.name || !config.metadata.uid) throw invalid('config.metadata name and uid must be set');
      // The runtime serves its default handler and its own name's (RuntimeClass handler `process`), as containerd answers for others.
      const handler = typeof req.runtimeHandler === 'string' ? req.runtimeHandler : '';
      if (handler && handler !== runtime.name) throw new Error(noRuntimeForHandler(handler));
      return { podSandboxId: await runtime.runPodSandbox(config) };
    },
    StopPodSandbox: async (req) => {
      await runtime.stopPodSandbox(requireId(req.podSandboxId, 'pod_sandbox_id'));
      return {};
    },
    RemovePodSandbox: async (req) => {
      await runtime.removePodSandbox(requireId(req.podSandboxId, 'pod_sandbox_id'));
      return {};
    },
    PodSandboxStatus: async (req) => {
      const s = await runtime.podSandboxStatus(requireId(req.podSandboxId, 'pod_sandbox_id'));
      return { status: sandboxStatusToWire(s), info: {} };
    },
    ListPodSandbox: async (req) => ({ items: (await runtime.listPodSandbox(sandboxFilterFromWire(req.filter))).map(sandboxItemToWire) }),

    CreateContainer: async (req) => {
      const sandboxId = requireId(req.podSandboxId, 'pod_sandbox_id');
      if (!req.config) throw invalid('config must be set');
      const config = containerConfigFromWire(req.config);
      if (!config.metadata.name) throw invalid('config.metadata.name must be set');
      // Without a sandbox config the runtime falls back to the one the sandbox was created with.
      const sandboxConfig = req.sandboxConfig ? sandboxConfigFromWire(req.sandboxConfig) : emptySandboxConfig();
      return { containerId: await runtime.createContainer(sandboxId, config, sandboxConfig) };
    },
    StartContainer: async (req) => {
      await runtime.startContainer(requireId(req.containerId, 'container_id'));
      return {};
    },
    StopContainer: async (req) => {
      await runtime.stopContainer(requireId(req.containerId, 'container_id'), int64(req.timeout));
      return {};
    },
    RemoveContainer: async (req) => {
      await runtime.removeContainer(requireId(req.containerId, 'container_id'));
      return {};
    },
    ContainerStatus: async (req) => {
      const id = requireId(req.containerId, 'container_id');
      const status = containerStatusToWire(await runtime.containerStatus(id));
      // verbose: the runtime's debugging map, e.g. the process context of a host-process container.
      const info = req.verbose ? await runtime.containerInfo(id) : {};
      return { status, info };
    },
    ListContainers: async (req) => ({ containers: (await runtime.listContainers(containerFilterFromWire(req.filter))).map(containerItemToWire) }),
    UpdateContainerResources: unimplemented('UpdateContainerResources'),
    ReopenContainerLog: unimplemented('ReopenContainerLog'),

    ExecSync: async (req) => {
      const id = requireId(req.containerId, 'container_id');
      const cmd: string[] = req.cmd ?? [];
      if (cmd.length === 0) throw invalid('cmd must not be empty');
      const timeout = int64(req.timeout);
      const res = await runtime.execSync(id, cmd, timeout);
      if (res.timedOut) throw new CriStatusError(grpc.status.DEADLINE_EXCEEDED, `command timed out after ${timeout}s`);
      return { stdout: res.stdout, stderr: res.stderr, exitCode: res.exitCode };
    },
    Exec: async (req) => {
      return runtime.exec({
        containerId: requireId(req.containerId, 'container_id'),
        cmd: req.cmd ?? [],
        tty: !!req.tty,
        stdin: !!req.stdin,
        stdout: !!req.stdout,
        stderr: !!req.stderr,
      });
    },
    Attach: async (req) => {
      return runtime.attach({
        containerId: requireId(req.containerId, 'container_id'),
        tty: !!req.tty,
        stdin: !!req.stdin,
        stdout: !!req.stdout,
        stderr: !!req.stderr,
      });
    },
    PortForward: async (req) => {
      return runtime.portForward(requireId(req.podSandboxId, 'pod_sandbox_id'), req.port ?? []);
    },

    // Usage figures are not measured by every runtime: the attributes, with no usage, are a valid answer.
    ContainerStats: async (req) => {
      const s = await runtime.containerStatus(requireId(req.containerId, 'container_id'));
      return { stats: statsAttributes(s) };
    },
    ListContainerStats: async (req) => {
      const f = req.filter as Wire | null;
      const list = await runtime.listContainers({
        ...(f?.id ? { id: f.id } : {}),
        ...(f?.podSandboxId ? { podSandboxId: f.podSandboxId } : {}),
        ...(f?.labelSelector && Object.keys(f.labelSelector).length > 0 ? { labelSelector: f.labelSelector } : {}),
        state: 'CONTAINER_RUNNING',
      });
      return { stats: list.map(statsAttributes) };
    },
  };

  const images = runtime.images;
  const img: Record<string, Handler> = {
    ListImages: async (req) => ({
      images: (await images.listImages(req.filter?.image ? { image: imageSpecFromWire(req.filter.image) } : undefined)).map(imageToWire),
    }),
    ImageStatus: async (req) => {
      if (!req.image?.image) throw invalid('image must be set');
      const i = await images.imageStatus(imageSpecFromWire(req.image));
      return { image: i ? imageToWire(i) : undefined, info: {} };
    },
    PullImage: async (req) => {
      if (!req.image?.image) throw invalid('image must be set');
      const spec = imageSpecFromWire(req.image);
      return { imageRef: await images.pullImage(spec, authFromWire(req.auth), req.sandboxConfig ? sandboxConfigFromWire(req.sandboxConfig) : undefined) };
    },
    RemoveImage: async (req) => {
      if (!req.image?.image) throw invalid('image must be set');
      await images.removeImage(imageSpecFromWire(req.image));
      return {};
    },
    ImageFsInfo: async () => ({ imageFilesystems: [], containerFilesystems: [] }),
  };

  const runtimeImpl: grpc.UntypedServiceImplementation = {};
  for (const [m, fn] of Object.entries(rt)) runtimeImpl[m] = unary(logger, m, fn);
  runtimeImpl.GetContainerEvents = (call: grpc.ServerWritableStream<Wire, Wire>) => {
    const off = runtime.onContainerEvent((ev) => {
      if (!call.cancelled) call.write(containerEventToWire(ev));
    });
    // Headers at once: the client knows the stream is live before the first event.
    call.sendMetadata(new grpc.Metadata());
    const done = () => off();
    call.on('cancelled', done);
    call.on('close', done);
    call.on('error', done);
  };
  const imageImpl: grpc.UntypedServiceImplementation = {};
  for (const [m, fn] of Object.entries(img)) imageImpl[m] = unary(logger, m, fn);
  return { runtime: runtimeImpl, image: imageImpl };
}

function statsAttributes(s: {
  id: string;
  metadata: { name: string; attempt: number };
  labels: Record<string, string>;
  annotations: Record<string, string>;
}): Wire {
  return { attributes: { id: s.id, metadata: s.metadata, labels: s.labels, annotations: s.annotations }, cpu: { timestamp: msToNs(Date.now()) } };
}

function emptySandboxConfig() {
  return { metadata: { name: '', namespace: '', uid: '', attempt: 0 }, hostname: '', logDirectory: '', labels: {}, annotations: {}, portMappings: [] };
}

export interface CriServer {
  /** The endpoint it listens on (`unix:///…`). */
  endpoint: string;
  /** Stops accepting calls, ends event streams, removes the socket. */
  close(): Promise<void>;
}

/**
 * Serves a runtime on a unix socket (created 0600, in a directory created 0700 when missing). A
 * stale socket file at the path is replaced; the caller checks first that nothing answers on it.
 */
export async function serveCri(runtime: RuntimeService, opts: { endpoint: string; logger: Logger }): Promise<CriServer> {
  const path = socketPathOf(opts.endpoint);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await unlink(path).catch(() => {});
  const services = loadCriServices();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 16 * 1024 * 1024 });
  const h = criHandlers(runtime, opts.logger);
  server.addService(services.RuntimeService.service, h.runtime);
  server.addService(services.ImageService.service, h.image);
  // The socket exists from bind on; a restrictive umask keeps the window before chmod closed.
  const oldMask = process.umask(0o177);
  try {
    await new Promise<number>((resolve, reject) =>
      server.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    );
  } finally {
    process.umask(oldMask);
  }
  await chmod(path, 0o600);
  // A service lives long: its codecs are made while it waits for its first calls.
  const stopWarming = warmCodecs(services.messageTypes);
  return {
    endpoint: `unix://${path}`,
    close: async () => {
      stopWarming();
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      });
      await unlink(path).catch(() => {});
    },
  };
}
