// The process runtime as a long-lived CRI service (`podvisor runtime serve`): durable state in the
// root dir, re-adoption of its containers after a restart, the CRI on a unix socket, one instance per
// root dir (CRI Exec/Attach through the runtime's loopback streaming server). Loads only the runtime's own modules.

import { closeSync, existsSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RealClock, type Clock, type Timer } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import { serveCri, type CriServer } from '../cri/server.js';
import { procStartTime, processState } from './adopt.js';
import { ProcessRuntime, type SpawnerChoice } from './runtime.js';
import { defaultRuntimeEndpoint, runtimeStateDir } from './state.js';
import { podNetworkHostProblems, type PodNetworkConfig } from './pod-netns.js';

export interface ProcessRuntimeService {
  runtime: ProcessRuntime;
  server: CriServer;
  restored: { sandboxes: number; adopted: number; lost: number };
  /** Stops serving and lets go of the containers, which keep running. */
  close(): Promise<void>;
}

/** Raised when another live service holds the root dir. */
export class AlreadyServingError extends Error {}

/**
 * Takes `<state>/service.lock` (pid and start time of the holder). A lock whose holder is gone is
 * taken over; a live holder means another service owns this root dir.
 */
function takeLock(file: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid} ${procStartTime(process.pid) ?? ''}\n`);
      closeSync(fd);
      return () => {
        try {
          unlinkSync(file);
        } catch {
          // gone already
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const [pid, start] = readFileSync(file, 'utf8').trim().split(' ');
      if (pid && start && Number(pid) !== process.pid && processState(Number(pid), start) === 'running') {
        throw new AlreadyServingError(`another runtime service (pid ${pid}) serves this root dir`);
      }
      unlinkSync(file);
    }
  }
  throw new AlreadyServingError('could not take the runtime service lock');
}

const ROOT_CHECK_MS = 5_000;
/**
 * How long the service waits, with no agent following its events and no pod sandbox left, before
 * it stops by itself: an agent that stopped, or was killed, leaves nothing behind. An agent that
 * comes back within it finds the service; later, the agent starts it again on demand.
 */
export const IDLE_EXIT_MS = 10_000;

export async function startProcessRuntimeService(opts: {
  rootDir: string;
  endpoint?: string;
  logger: Logger;
  /** Called when the state directory disappeared. */
  onGone?: () => void;
  /** Called once no agent is connected and no sandbox is left for idleExitMs (IDLE_EXIT_MS). */
  onIdle?: () => void;
  idleExitMs?: number;
  /** Processes per pod (the kubelet's podPidsLimit); unset: unlimited. */
  podPidsLimit?: number;
  /** The real clock when unset. */
  clock?: Clock;
  /** A network namespace per pod on this CNI bridge (`--pod-network=cni`); unset: the host's network. */
  podNetwork?: PodNetworkConfig;
  /** Who forks containers' processes (ProcessRuntimeOptions.spawner). */
  spawner?: SpawnerChoice;
}): Promise<ProcessRuntimeService> {
  if (opts.podNetwork) {
    const problems = podNetworkHostProblems(opts.podNetwork);
    if (problems.length) throw new Error(`--pod-network=cni: ${problems.join('; ')}`);
  }
  const stateDir = runtimeStateDir(opts.rootDir);
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const unlock = takeLock(join(stateDir, 'service.lock'));
  const clock = opts.clock ?? new RealClock();
  let idleTimer: Timer | undefined;
  let serving = false;
  const checkIdle = () => {
    idleTimer?.cancel();
    idleTimer = undefined;
    if (!serving || !opts.onIdle || runtime.occupied()) return;
    const idleExitMs = opts.idleExitMs ?? IDLE_EXIT_MS;
    idleTimer = clock.setTimer(idleExitMs, () => {
      opts.logger.info('No agent connected and no pod sandbox left; stopping', { idleMs: idleExitMs });
      opts.onIdle?.();
    });
  };
  let runtime!: ProcessRuntime;
  try {
    runtime = new ProcessRuntime({
      rootDir: opts.rootDir,
      clock,
      logger: opts.logger,
      stateDir,
      onOccupancyChange: checkIdle,
      ...(opts.podPidsLimit !== undefined ? { podPidsLimit: opts.podPidsLimit } : {}),
      ...(opts.podNetwork ? { podNetwork: opts.podNetwork } : {}),
      ...(opts.spawner ? { spawner: opts.spawner } : {}),
    });
    const restored = await runtime.restore();
    const server = await serveCri(runtime, { endpoint: opts.endpoint ?? defaultRuntimeEndpoint(opts.rootDir), logger: opts.logger });
    // A root dir removed under a running service leaves nothing to serve: it stops by itself.
    const gone = setInterval(() => {
      if (!existsSync(stateDir)) {
        opts.logger.warn('Runtime state directory removed; stopping', { stateDir });
        clearInterval(gone);
        opts.onGone?.();
      }
    }, ROOT_CHECK_MS);
    gone.unref();
    serving = true;
    checkIdle();
    return {
      runtime,
      server,
      restored,
      close: async () => {
        clearInterval(gone);
        serving = false;
        idleTimer?.cancel();
        await server.close();
        await runtime.release();
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}
