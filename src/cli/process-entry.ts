// Runs a CLI entry function as this process's command: argv, stdio, signals and the exit code. The
// full CLI (main.ts) and the client commands' entry (client-main.ts) both start through it.

import { builtin } from '../util/builtins.js';
import { closeInheritedFds } from '../util/inherited-fds.js';
import { shutdownSignals } from './signals.js';
import type { CommandIO } from './args.js';

const { getEventListeners } = builtin('node:events');
const { constants } = builtin('node:os');

/** A CLI entry: argv without node and script, the process's stdio; resolves to the exit code. */
export type EntryMain = (argv: readonly string[], io: CommandIO) => Promise<number>;

/** Runs entry with this process's argv, stdio and signals, and sets the exit code it resolves to. */
export function runAsProcessCommand(entry: EntryMain): void {
  // No descriptor inherited from the caller reaches a container.
  closeInheritedFds();
  // A reader that goes away (`| head`) ends the output, not the command: the pods it runs still stop.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  // Node opens its inspector on SIGUSR1 (port 9229) unless the signal has a listener: never here.
  process.on('SIGUSR1', () => {});
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    // A second signal while shutting down exits at once, as users expect from Ctrl-C twice.
    // Commands that stop gracefully listen on io.signal; for the others the signal ends the process.
    if (controller.signal.aborted || getEventListeners(controller.signal, 'abort').length === 0) {
      process.exit(128 + (constants.signals[sig] ?? 15));
    }
    controller.abort(sig);
  };
  for (const sig of shutdownSignals) process.on(sig, onSignal);
  const io: CommandIO = {
    // process.stdin is built on first use; most commands never read it.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  };
  // The agent's timers are unref'd (a Clock never keeps a process alive by itself), so while a command
  // waits only on them (a back-off, a run-once retry) nothing else would hold the event loop open and
  // Node would exit early with status 0. Hold it open until the command has returned its exit code.
  const keepAlive = setInterval(() => {}, 1 << 30);
  entry(process.argv.slice(2), io)
    .then(
      (code) => {
        process.exitCode = code;
      },
      (err: unknown) => {
        process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exitCode = 1;
      },
    )
    .finally(() => clearInterval(keepAlive));
}
