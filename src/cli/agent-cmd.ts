// `podvisor agent` (the node agent, in the foreground) and `podvisor agent status`; each loads only
// what it needs.

import type { Command, CommandIO } from './args.js';

export const agentCommand: Command = {
  name: 'agent',
  summary: 'Run the node agent: static pods, pods applied with up -d, the kubelet HTTP API',
  async run(argv: string[], io: CommandIO) {
    if (argv[0] === 'status') return (await import('./agent-status.js')).agentStatusCommand.run(argv.slice(1), io);
    return (await import('./agent-daemon.js')).agentDaemonCommand.run(argv, io);
  },
};
