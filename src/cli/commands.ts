// The command table `podvisor` dispatches through. Each command lives in its own module and is
// listed here by one line, in the order `podvisor --help` shows them.

import type { Command } from './args.js';
import { validateCommand } from './validate.js';
import { runCommand } from './run.js';
import { upCommand } from './up.js';
import { runtimeCommand } from './runtime.js';
import { imagesCommand } from './images.js';

export type { Command, CommandIO } from './args.js';

export const commands: Command[] = [
  validateCommand,
  runCommand,
  upCommand,
  runtimeCommand,
  imagesCommand,
];

/** The command named name, if any. */
export function findCommand(name: string, table: readonly Command[] = commands): Command | undefined {
  return table.find((c) => c.name === name);
}
