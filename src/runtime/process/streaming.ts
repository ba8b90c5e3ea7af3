// CRI Exec and Attach for the process runtime service: the requests checked as containerd checks
// them, answered with single-use URLs of a streaming server on a 0600 unix socket of the runtime's
// state dir (loopback without one), revoked when their container stops or is removed; an exec runs
// in the container's process context and an attach follows the container's output (no stdin).

import * as grpc from '@grpc/grpc-js';
import { PassThrough } from 'node:stream';
import type { Logger } from '../../util/logger.js';
import type { ContainerEvent, ContainerStatus, StreamingRequest } from '../cri.js';
import { CriStatusError } from '../cri/server.js';
import type { ExecSession } from '../streams.js';
import { startStreamServer, type StreamBackend, type StreamListen, type StreamServer } from '../cri/stream-server.js';
import type { Clock } from '../../util/clock.js';
import { startExecSession, type ContainerProcessContext } from './exec-session.js';
import type { OutputListener } from '../logs/follow.js';

/** What of the process runtime its streaming serves from. */
export interface StreamedRuntime {
  containerProcess(containerId: string): ContainerProcessContext | undefined;
  containerStatus(containerId: string): Promise<ContainerStatus>;
  onContainerEvent(listener: (ev: ContainerEvent) => void): () => void;
  onContainerOutput(listener: OutputListener): () => void;
}

/** The runtime's CRI Exec, Attach and PortForward; close() stops the streaming server and its sessions. */
export interface ProcessStreaming {
  exec(req: StreamingRequest): Promise<{ url: string }>;
  attach(req: Omit<StreamingRequest, 'cmd'>): Promise<{ url: string }>;
  portForward(): Promise<{ url: string }>;
  /** Forgets the URLs of a container that stopped or was removed: they are refused from now on. */
  revoke(containerId: string): void;
  close(): Promise<void>;
}

export { STREAMING_SOCKET } from './socket-paths.js';

const PORT_FORWARD_UNSUPPORTED =
  'PortForward is not served by the process runtime: its pods share the host network, so their ports are reached on 127.0.0.1 directly';

const invalid = (m: string) => new CriStatusError(grpc.status.INVALID_ARGUMENT, m);

/** Output lines of a running container until it stops; the exit code is the container's. */
function attachSession(runtime: StreamedRuntime, id: string, req: Omit<StreamingRequest, 'cmd'>): ExecSession {
  const stdout = req.stdout ? new PassThrough() : undefined;
  const stderr = req.stderr ? new PassThrough() : undefined;
  let resolveExit!: (code: number) => void;
  const exit = new Promise<number>((r) => (resolveExit = r));
  let ended = false;
  const end = (code: number) => {
    if (ended) return;
    ended = true;
    stopOutput();
    stopEvents();
    stdout?.end();
    stderr?.end();
    resolveExit(code);
  };
  const stopOutput = runtime.onContainerOutput((cid, stream, line) => {
    if (cid === id) (stream === 'stdout' ? stdout : (stderr ?? stdout))?.write(`${line}\n`);
  });
  const finish = () =>
    runtime.containerStatus(id).then(
      (s) => end(s.exitCode),
      () => end(0),
    );
  const stopEvents = runtime.onContainerEvent((ev) => {
    if (ev.containerId === id && (ev.type === 'CONTAINER_STOPPED_EVENT' || ev.type === 'CONTAINER_DELETED_EVENT')) void finish();
  });
  // Stopped between the URL and the connection: nothing more will be written.
  void runtime.containerStatus(id).then(
    (s) => s.state !== 'CONTAINER_RUNNING' && end(s.exitCode),
    () => end(0),
  );
  return { ...(stdout ? { stdout } : {}), ...(stderr ? { stderr } : {}), resize() {}, exit, kill: () => end(0) };
}

/**
 * Exec, Attach and PortForward of a process runtime; its streaming server starts on the first
 * request. close() stops it and every session on it.
 */
export function processStreaming(runtime: StreamedRuntime, opts: { logger: Logger; clock: Clock; listen: StreamListen }): ProcessStreaming {
  const backend: StreamBackend = {
    running: (id) => runtime.containerProcess(id)?.running === true,
    exec: (req) => {
      const ctx = runtime.containerProcess(req.containerId);
      if (!ctx) throw new Error(`container ${req.containerId} not found`);
      return startExecSession(ctx, req.cmd, req);
    },
    attach: (req) => attachSession(runtime, req.containerId, req),
  };
  let started: Promise<StreamServer> | undefined;
  const server = () => (started ??= startStreamServer(backend, opts));
  const check = async (req: Omit<StreamingRequest, 'cmd'>) => {
    if (!req.containerId) throw invalid('container_id must be set');
    if (req.tty && req.stderr) throw invalid('tty and stderr cannot both be true');
    if (!req.stdin && !req.stdout && !req.stderr) throw invalid('one of stdin, stdout, or stderr must be set');
    const s = await runtime.containerStatus(req.containerId);
    if (s.state !== 'CONTAINER_RUNNING') throw new CriStatusError(grpc.status.FAILED_PRECONDITION, `container is in ${s.state} state`);
  };
  return {
    exec: async (req) => {
      if (req.cmd.length === 0 || !req.cmd[0]) throw invalid('cmd must not be empty');
      await check(req);
      return { url: (await server()).execUrl(req) };
    },
    attach: async (req) => {
      await check(req);
      if (req.stdin) throw new CriStatusError(grpc.status.FAILED_PRECONDITION, 'the process runtime gives containers no stdin to attach to');
      return { url: (await server()).attachUrl(req) };
    },
    portForward: async () => {
      throw new CriStatusError(grpc.status.UNIMPLEMENTED, PORT_FORWARD_UNSUPPORTED);
    },
    // Told by the runtime itself, not through its event subscription: a subscriber there counts
    // as an agent following the runtime, and would keep an idle service from ever exiting.
    revoke: (containerId) => {
      if (started) void started.then((s) => s.revoke(containerId)).catch(() => {});
    },
    close: async () => {
      const running = started;
      started = undefined;
      await (await running?.catch(() => undefined))?.close();
    },
  };
}
