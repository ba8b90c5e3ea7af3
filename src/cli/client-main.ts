// The entry of the client bundle (dist/bundle/client.cjs, scripts/bundle.mjs): `--version` and the
// commands that only talk to a running agent, each the same module the full CLI runs. Holding none of
// the agent, the runtime or manifest loading, it is a fraction of the full bundle to read and compile.

import type { Command, CommandIO } from './args.js';
import { runAsProcessCommand } from './process-entry.js';
import { podvisorVersion } from './version.js';

/**
 * The client commands by name, each loaded on its first run as commands.ts loads it. The launcher
 * (bundle-loader.cts clientCommandNames) sends exactly these names here; everything else (help,
 * errors, the other commands) goes to the full CLI.
 */
export const clientCommands: Record<string, () => Promise<Command>> = {
  get: () => import('./get.js').then((m) => m.getCommand),
  logs: () => import('./logs.js').then((m) => m.logsCommand),
  describe: () => import('./describe.js').then((m) => m.describeCommand),
  exec: () => import('./exec.js').then((m) => m.execCommand),
  top: () => import('./top.js').then((m) => m.topCommand),
  probes: () => import('./probes.js').then((m) => m.probesCommand),
  'port-forward': () => import('./port-forward.js').then((m) => m.portForwardCommand),
};

/** Runs a client command (or `--version`), as main.ts's main runs it. */
export async function clientMain(argv: readonly string[], io: CommandIO): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--version' || first === 'version') {
    io.stdout.write(`podvisor ${podvisorVersion()}\n`);
    return 0;
  }
  const load = first !== undefined && Object.hasOwn(clientCommands, first) ? clientCommands[first] : undefined;
  if (!load) throw new Error(`podvisor client: "${first ?? ''}" is not a client command`);
  return (await load()).run(rest, io);
}

/** Runs the client command of this process's argv (the launcher calls it). */
export function runExecutable(): void {
  runAsProcessCommand(clientMain);
}
