// `podvisor runtime serve`: runs the process runtime as a CRI service until SIGINT/SIGTERM. Kept
// apart from the agent's commands (main.ts dispatches here directly) so the service loads only the
// runtime's modules.

import { resolve } from 'node:path';
import { defineCommand } from './args.js';
import { defaultRootDir } from '../runtime/root-dir.js';
import { streamLogger } from '../util/logger.js';
import { lossyLogStream } from '../runtime/logs/lossy-stream.js';

export const runtimeCommand = defineCommand({
  name: 'runtime',
  summary: 'Run the process runtime as a CRI service (runtime serve)',
  usage: 'podvisor runtime serve [--root-dir DIR] [--listen unix:///PATH] [flags]',
  description:
    'Serve the process runtime over the CRI (runtime.v1 RuntimeService and ImageService) on a unix\n' +
    'socket. It owns the containers: they keep running when the agent or this service stops, and a\n' +
    'restarted service takes them back from its state in the root dir. The agent starts it on demand.',
  examples: ['podvisor runtime serve --root-dir /var/lib/podvisor'],
  flags: [
    { name: 'root-dir', type: 'string', valueName: 'DIR', usage: 'Directory for the runtime state, pod sandboxes and logs (default as for run).' },
    { name: 'listen', type: 'string', valueName: 'ENDPOINT', usage: 'CRI endpoint to serve, unix:///path (default unix://<root-dir>/runtime.sock).' },
    {
      name: 'pod-max-pids',
      type: 'string',
      valueName: 'N',
      usage: "Processes each pod may run, as the kubelet's podPidsLimit (unset or -1: unlimited; needs root and cgroups).",
    },
    {
      name: 'pod-network',
      type: 'string',
      values: ['host', 'cni'],
      default: 'host',
      usage: "host: pods share the host's network; cni: a network namespace per pod on the root dir's CNI bridge (needs root and the CNI plugins).",
    },
    {
      name: 'pod-cidr',
      type: 'string',
      valueName: 'CIDR',
      usage: 'The pod range with --pod-network=cni (default: a /24 of 10.85.0.0/16 picked by the root dir).',
    },
    {
      name: 'spawner',
      type: 'string',
      values: ['perl', 'none'],
      default: 'perl',
      usage:
        "perl: containers' processes are forked by a small perl process, not by this service's larger heap (where perl is installed); none: by this service.",
    },
    {
      name: 'log-level',
      type: 'string',
      values: ['debug', 'info', 'warn', 'error'],
      default: 'info',
      usage: 'Minimum level of the log lines written to stderr.',
    },
  ],
  checkArgs: (args) =>
    args.length === 1 && args[0] === 'serve'
      ? undefined
      : args.length === 0
        ? 'a subcommand is required: serve'
        : `unknown subcommand "${args[0]}" (supported: serve)`,
  async run(parsed, io) {
    const rootFlag = parsed.flags['root-dir'];
    const rootDir = rootFlag ? resolve(io.cwd, String(rootFlag)) : defaultRootDir(io.env);
    const listen = parsed.flags.listen ? String(parsed.flags.listen) : undefined;
    const logger = streamLogger(lossyLogStream(io.stderr), parsed.flags['log-level'] as 'info');
    const { AlreadyServingError, startProcessRuntimeService } = await (await import('../runtime/process-runtime.js')).loadProcessRuntimeService();
    const { criTarget } = await import('../runtime/cri/proto.js');
    const socketProblem = (await import('../runtime/process-runtime.js')).rootDirSocketProblem(rootDir);
    if (socketProblem) {
      io.stderr.write(`error: invalid argument "${rootDir}" for "--root-dir" flag: ${socketProblem}\nSee 'podvisor runtime --help' for usage.\n`);
      return 2;
    }
    if (listen) {
      try {
        criTarget(listen);
      } catch (err) {
        io.stderr.write(`error: invalid argument "${listen}" for "--listen" flag: ${(err as Error).message}\nSee 'podvisor runtime --help' for usage.\n`);
        return 2;
      }
    }
    const pidsFlag = parsed.flags['pod-max-pids'];
    const podPidsLimit = pidsFlag === undefined || pidsFlag === '' ? undefined : Number(pidsFlag);
    if (podPidsLimit !== undefined && !Number.isInteger(podPidsLimit)) {
      io.stderr.write(`error: invalid argument "${String(pidsFlag)}" for "--pod-max-pids" flag: not an integer\nSee 'podvisor runtime --help' for usage.\n`);
      return 2;
    }
    let podNetwork;
    if (parsed.flags['pod-network'] === 'cni') {
      const { defaultPodCIDR } = await import('../runtime/cni-config.js');
      const { podNetworkConfig } = await import('../runtime/process-runtime.js');
      podNetwork = podNetworkConfig(rootDir, parsed.flags['pod-cidr'] ? String(parsed.flags['pod-cidr']) : defaultPodCIDR(rootDir));
    }
    let service;
    let rootGone!: () => void;
    const gone = new Promise<void>((r) => (rootGone = r));
    try {
      service = await startProcessRuntimeService({
        rootDir,
        logger,
        onGone: rootGone,
        onIdle: rootGone,
        ...(listen ? { endpoint: listen } : {}),
        ...(podPidsLimit !== undefined && podPidsLimit > 0 ? { podPidsLimit } : {}),
        ...(podNetwork ? { podNetwork } : {}),
        spawner: parsed.flags.spawner as 'perl' | 'none',
      });
    } catch (err) {
      io.stderr.write(`error: ${(err as Error).message}\n`);
      return err instanceof AlreadyServingError ? 3 : 1;
    }
    const { restored } = service;
    logger.info('Runtime service listening', { endpoint: service.server.endpoint, pid: process.pid, ...restored });
    await Promise.race([
      gone,
      new Promise<void>((done) => {
        if (!io.signal) return;
        if (io.signal.aborted) done();
        else io.signal.addEventListener('abort', () => done(), { once: true });
      }),
    ]);
    await service.close();
    logger.info('Runtime service stopped; containers keep running');
    return 0;
  },
});
