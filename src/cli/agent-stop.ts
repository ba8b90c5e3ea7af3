// `podvisor agent stop [--delete-pods]`: stops the agent of a root dir gracefully (as SIGTERM does),
// whether `up -d`, `apply` or a user started it; with --delete-pods its API pods are deleted first,
// as `podvisor down --all --agent` does. The runtime service goes too once no pod is left in it.

import { defineCommand, type CommandIO, type ParsedArgs } from './args.js';
import { stopAgent } from './agent-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';

export const agentStopCommand = defineCommand({
  name: 'agent stop',
  summary: 'Stop the agent of the root dir',
  usage: 'podvisor agent stop [--delete-pods] [--grace-period N] [--root-dir DIR]',
  description:
    'Stop the agent of the root dir gracefully, as SIGTERM does: its containers keep running with the\n' +
    'runtime and the next agent adopts them. With --delete-pods, every pod applied through its API is\n' +
    'deleted first (gracefully, or with --grace-period), and the process runtime service, left with no\n' +
    'pod, stops with the agent. Exit status 0 also when no agent runs.',
  examples: ['podvisor agent stop', 'podvisor agent stop --delete-pods --grace-period 0'],
  flags: [
    { name: 'delete-pods', type: 'boolean', usage: 'Delete the pods applied through the API first.' },
    { name: 'grace-period', type: 'int', usage: 'With --delete-pods: seconds each pod gets to stop; default its terminationGracePeriodSeconds.' },
    rootDirFlag,
  ],
  run: stop,
});

async function stop(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const rootDir = rootDirOf(parsed, io);
  if (parsed.flags['delete-pods'] === true) {
    const grace = parsed.flags['grace-period'];
    const { downCommand } = await import('./down.js');
    return downCommand.run(['--all', '--agent', '--root-dir', rootDir, ...(grace !== undefined ? ['--grace-period', String(grace)] : [])], io);
  }
  try {
    if (await stopAgent(rootDir)) io.stderr.write(`stopped the podvisor agent for ${rootDir}\n`);
    else io.stderr.write(`no podvisor agent runs for root dir ${rootDir}\n`);
    return 0;
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
}
