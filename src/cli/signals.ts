// The signals that stop a command gracefully, as SIGTERM does, and how a command that supervises pods
// (run, up) sees them: the first begins a graceful stop, a later one must end it at once. Loads
// nothing else, so the entry point can install its handlers before any command is chosen.

import type { CommandIO } from './args.js';

/** SIGHUP (terminal closed) and SIGQUIT are handled as SIGTERM: they must never orphan a container. */
export const shutdownSignals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

export interface SignalHandlers {
  /** The first SIGINT/SIGTERM/SIGHUP/SIGQUIT (io.signal aborted): begin a graceful shutdown. */
  first(signal: string): void;
  /**
   * A later shutdown signal: the entry point exits the process right after this returns, so it must
   * do its work synchronously.
   */
  again(signal: NodeJS.Signals): void;
}

/**
 * Routes shutdown signals to a supervising command: the first through io.signal, later ones from
 * the process itself (only when running as the real process, i.e. io.signal is given). Returns the
 * unsubscribe function.
 */
export function watchShutdownSignals(io: CommandIO, handlers: SignalHandlers): () => void {
  const signal = io.signal;
  if (!signal) return () => {};
  let firstSeen = false;
  const onAbort = () => {
    firstSeen = true;
    handlers.first(String(signal.reason ?? 'SIGTERM'));
  };
  const onProcessSignal = (sig: NodeJS.Signals) => {
    // The entry point's own listener turns the first signal into the abort; only later ones are ours.
    if (firstSeen) handlers.again(sig);
  };
  if (signal.aborted) queueMicrotask(onAbort);
  else signal.addEventListener('abort', onAbort, { once: true });
  // Prepended so it runs before the entry point's listener exits the process.
  for (const sig of shutdownSignals) process.prependListener(sig, onProcessSignal);
  return () => {
    signal.removeEventListener('abort', onAbort);
    for (const sig of shutdownSignals) process.removeListener(sig, onProcessSignal);
  };
}
