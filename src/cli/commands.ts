// The command table `podvisor` dispatches through. Each command lives in its own module and is
// listed here by one line, in the order `podvisor --help` shows them.

import type { Command } from './args.js';
import { validateCommand } from './validate.js';
import { runCommand } from './run.js';
import { upCommand } from './up.js';
import { agentCommand } from './agent-cmd.js';
import { downCommand } from './down.js';
import { logsCommand } from './logs.js';

export type { Command, CommandIO } from './args.js';

export const commands: Command[] = [
  validateCommand,
  runCommand,
  upCommand,
  downCommand,
  logsCommand,
  agentCommand,
];

/** The command named name, if any. */
export function findCommand(name: string, table: readonly Command[] = commands): Command | undefined {
  return table.find((c) => c.name === name);
}
