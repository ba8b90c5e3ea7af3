// systemd readiness (sd_notify) for `podvisor agent` and `up` under a Type=notify unit: with
// NOTIFY_SOCKET set, STATUS= lines with counts while the pods given at start become Ready, READY=1
// once every one of them is Ready (or has Succeeded), STOPPING=1 when shutting down.
//
// The protocol is one datagram on a unix socket. Node has no unix datagram sockets (node:dgram is
// UDP only), and the npm packages that add them (sd-notify, unix-dgram, node-unix-socket) are native
// addons needing a compiler or prebuilt binaries per platform; so the messages go through systemd's
// own `systemd-notify --no-block`, which is on every host where NOTIFY_SOCKET means anything. The
// sender is then a child process: the unit needs NotifyAccess=all (see the README's example).

import { execFile } from 'node:child_process';
import type { Pod } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';

export interface ReadinessNotifierOptions {
  /** The value of NOTIFY_SOCKET; nothing is sent when unset or empty. */
  socket: string | undefined;
  /** The pods given at start (namespace/name), each to be Ready before READY=1. */
  given: readonly Pod[];
  /** The node's pods with their current status. */
  pods: () => readonly Pod[];
  clock: Clock;
  logger: Logger;
  /** How often the pods are looked at (1 s when unset). */
  pollMs?: number;
  /** The systemd-notify executable (`systemd-notify` on PATH when unset). */
  command?: string;
}

/** Stops the notifier and sends STOPPING=1 (resolves once sent). */
export type StopNotifier = () => Promise<void>;

const keyOf = (p: Pod) => `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name ?? ''}`;

function isDone(p: Pod): boolean {
  if (p.status?.phase === 'Succeeded') return true;
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Starts telling systemd how the given pods stand; a no-op without NOTIFY_SOCKET. */
export function startReadinessNotifier(o: ReadinessNotifierOptions): StopNotifier {
  const socket = o.socket;
  if (!socket) return () => Promise.resolve();
  const command = o.command ?? 'systemd-notify';
  let queue = Promise.resolve();
  let warned = false;
  const send = (...assignments: string[]) => {
    queue = queue.then(
      () =>
        new Promise<void>((resolve) => {
          execFile(command, ['--no-block', ...assignments], { env: { ...process.env, NOTIFY_SOCKET: socket } }, (err) => {
            if (err && !warned) {
              warned = true;
              o.logger.warn('Could not notify systemd', { command, err: err.message });
            }
            resolve();
          });
        }),
    );
    return queue;
  };

  const wanted = new Set(o.given.map(keyOf));
  let lastStatus = '';
  let ready = false;
  let timer: ReturnType<Clock['setTimer']> | undefined;
  const check = () => {
    timer = undefined;
    const byKey = new Map(o.pods().map((p) => [keyOf(p), p]));
    const done = [...wanted].filter((k) => {
      const p = byKey.get(k);
      return p !== undefined && isDone(p);
    }).length;
    const status = `STATUS=${done}/${wanted.size} pods Ready`;
    if (done === wanted.size) {
      ready = true;
      void send('READY=1', status);
      return;
    }
    if (status !== lastStatus) {
      lastStatus = status;
      void send(status);
    }
    timer = o.clock.setTimer(o.pollMs ?? 1000, check);
  };
  check();
  return () => {
    timer?.cancel();
    return send('STOPPING=1', `STATUS=stopping${ready ? '' : ' (never Ready)'}`);
  };
}

/** The notifier as `up` uses it: its stop (STOPPING=1) as an unsubscribe function. */
export function notifySystemd(socket: string | undefined, given: readonly Pod[], pods: () => readonly Pod[], clock: Clock): () => void {
  const stop = startReadinessNotifier({ socket, given, pods, clock, logger: silentLogger });
  return () => void stop();
}
