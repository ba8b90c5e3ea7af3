#!/usr/bin/env node
// The `podvisor` executable: global flags (--help, --version), then dispatch to a command of the
// table in commands.ts with the process's real stdio. Only Node's own modules load before a command
// is chosen; `--version` needs nothing else, and each command imports what it uses when it runs.

import { builtin } from '../util/builtins.js';
import type { Command, CommandIO } from './args.js';
import { runAsProcessCommand } from './process-entry.js';
import { podvisorVersion } from './version.js';

const { realpathSync } = builtin('node:fs');
const { fileURLToPath } = builtin('node:url');

export { podvisorVersion };

export function rootHelp(table: readonly Command[]): string {
  const width = Math.max(...table.map((c) => c.name.length));
  return [
    "podvisor runs Kubernetes Pod manifests on this host with the kubelet's semantics.",
    '',
    'Commands:',
    ...table.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Options:',
    '  -h, --help     help for podvisor',
    '      --version  print the version of podvisor',
    '',
    'Usage:',
    '  podvisor COMMAND [flags]',
    '',
    'Use "podvisor COMMAND --help" for more information about a command.',
    '',
  ].join('\n');
}

/** Runs podvisor with argv (without node and script); resolves to the exit code. */
export async function main(argv: readonly string[], io: CommandIO, given?: readonly Command[]): Promise<number> {
  const [first, ...rest] = argv;
  // The runtime service loads none of the agent's modules: it is dispatched before the table is loaded.
  if (!given && first === 'runtime') return (await import('./runtime.js')).runtimeCommand.run(rest, io);
  if (first === '--version' || first === 'version') {
    io.stdout.write(`podvisor ${podvisorVersion()}\n`);
    return 0;
  }
  const [{ commands, findCommand }, { usageFailure }] = await Promise.all([import('./commands.js'), import('./args.js')]);
  const table = given ?? commands;
  if (first === undefined || first === '--help' || first === '-h') {
    io.stdout.write(rootHelp(table));
    return 0;
  }
  if (first === 'help') {
    if (rest[0] === undefined) {
      io.stdout.write(rootHelp(table));
      return 0;
    }
    const cmd = findCommand(rest[0], table);
    if (!cmd) return usageFailure(io, `unknown command "${rest[0]}" for "podvisor"`);
    return cmd.run(['--help'], io);
  }
  if (first.startsWith('-')) return usageFailure(io, `unknown flag: ${first.split('=')[0]}`);
  const cmd = findCommand(first, table);
  if (!cmd) return usageFailure(io, `unknown command "${first}" for "podvisor"`);
  return cmd.run(rest, io);
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) runExecutable();

/**
 * Runs podvisor as this process's command: argv, stdio, signals and the exit code. Called when this
 * module is the script Node runs, or by the launcher (launch.cts) that starts the bundled CLI.
 */
export function runExecutable(): void {
  runAsProcessCommand(main);
}
