// The command table `podvisor` dispatches through, in the order `podvisor --help` shows them. Each
// command lives in its own module, loaded only when it runs; a command is one line here:
//   lazyCommand(NAME, SUMMARY, () => import('./MODULE.js').then((m) => m.EXPORT)),

import type { Command, CommandIO } from './args.js';

export type { Command, CommandIO } from './args.js';

/** A Command whose module is imported on its first run; its name and summary are known without it. */
export function lazyCommand(name: string, summary: string, load: () => Promise<Command>): Command {
  let loaded: Promise<Command> | undefined;
  return {
    name,
    summary,
    async run(argv: string[], io: CommandIO) {
      loaded ??= load();
      return (await loaded).run(argv, io);
    },
  };
}

export const commands: Command[] = [
  lazyCommand('validate', 'Check manifests as the API server would, without running anything', () => import('./validate.js').then((m) => m.validateCommand)),
  lazyCommand('run', 'Run pods once (the kubelet run-once mode): start, wait, report, stop', () => import('./run.js').then((m) => m.runCommand)),
  lazyCommand('up', 'Run pods in the foreground until interrupted, streaming their events', () => import('./up.js').then((m) => m.upCommand)),
  lazyCommand('runtime', 'Run the process runtime as a CRI service (runtime serve)', () => import('./runtime.js').then((m) => m.runtimeCommand)),
  lazyCommand('images', 'List the images the container runtime holds', () => import('./image.js').then((m) => m.imagesCommand)),
  lazyCommand('image', 'Load, list, remove and pull the images of containerd', () => import('./image.js').then((m) => m.imageCommand)),
  lazyCommand('down', 'Delete pods applied with up -d and wait until they are gone', () => import('./down.js').then((m) => m.downCommand)),
  lazyCommand('logs', 'Print the logs of a container of a pod run by the agent', () => import('./logs.js').then((m) => m.logsCommand)),
  lazyCommand('get', 'List the objects of the agent (pods, nodes, events, workloads…), as kubectl get prints them', () =>
    import('./get.js').then((m) => m.getCommand),
  ),
  lazyCommand('describe', 'Show a pod in detail: containers, conditions, events (kubectl describe)', () =>
    import('./describe.js').then((m) => m.describeCommand),
  ),
  lazyCommand('probes', "Show a pod's probe results: timeline, streaks, what they changed, where each probe stands", () =>
    import('./probes.js').then((m) => m.probesCommand),
  ),
  lazyCommand('apply', 'Create or update pods, ConfigMaps and Secrets on the agent, as kubectl apply', () => import('./apply.js').then((m) => m.applyCommand)),
  lazyCommand('delete', 'Delete pods (or ConfigMaps, Secrets) from the agent and wait until they are gone', () =>
    import('./delete.js').then((m) => m.deleteCommand),
  ),
  lazyCommand('wait', 'Wait until pods meet a condition, failing at once when they cannot (kubectl wait)', () =>
    import('./wait.js').then((m) => m.waitCommand),
  ),
  lazyCommand('exec', 'Run a command in a container of a pod run by the agent', () => import('./exec.js').then((m) => m.execCommand)),
  lazyCommand('port-forward', 'Forward local ports to a pod run by the agent', () => import('./port-forward.js').then((m) => m.portForwardCommand)),
  lazyCommand('top', 'Show the CPU and memory use of pods run by the agent', () => import('./top.js').then((m) => m.topCommand)),
  lazyCommand('doctor', 'Check the host for the container runtime: what is missing and how to fix it', () =>
    import('./doctor.js').then((m) => m.doctorCommand),
  ),
  lazyCommand('agent', 'Run the node agent: static pods, pods applied with up -d, the kubelet HTTP API', () =>
    import('./agent.js').then((m) => m.agentCommand),
  ),
];

/** The command named name, if any. */
export function findCommand(name: string, table: readonly Command[] = commands): Command | undefined {
  return table.find((c) => c.name === name);
}
