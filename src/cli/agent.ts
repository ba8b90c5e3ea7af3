// `podvisor agent`: the kubelet's flags read, then the standalone agent (src/agent/run-standalone.ts)
// or, with --kubeconfig, the cluster node (src/agent/run-cluster-node.ts) in the foreground; and
// `podvisor agent status`. Each loads only what it needs.

import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { AgentSettings } from '../agent/settings.js';
import { isLoopbackAddress } from '../server/access.js';
import type { Logger } from '../util/logger.js';
import { defineCommand, usageFailure, UsageError, type Command, type CommandIO, type ParsedArgs } from './args.js';
import { checkClusterInputs, clusterFlagSpecs, clusterSettings, nodeRegistration } from './agent-cluster-flags.js';
import { durationFlag } from './duration.js';
import { podvisorExecutable } from './executable.js';
import { podvisorVersion } from './version.js';

function portFlag(parsed: ParsedArgs, name: string): number | undefined {
  const raw = parsed.flags[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(String(raw)) || n > 65535)
    throw new UsageError(`invalid argument "${String(raw)}" for "--${name}" flag: must be a port number (0-65535)`);
  return n;
}

const name = 'agent';
const summary = 'Run the node agent: static pods, pods applied with up -d, the kubelet HTTP API';

/**
 * The agent in the foreground. Its flags include the agent flags, whose module reads them into
 * settings (and loads the runtime's gRPC client with it): the command is defined once that module is
 * loaded, which `agent status` never needs.
 */
const foreground = (flags: typeof import('./agent-flags.js')) =>
  defineCommand({
    name,
    summary,
    usage:
      'podvisor agent [--pod-manifest-path DIR] [--manifest-url URL] [--port N] [--node-labels K=V,…] [--register-with-taints K=V:EFFECT,…] [flags]\n  podvisor agent --kubeconfig FILE [--node-name N] [--node-labels K=V,…] [--register-with-taints K=V:EFFECT,…] [flags]\n  podvisor agent status [--root-dir DIR] [-o json]\n  podvisor agent stop [--delete-pods] [--root-dir DIR]',
    description:
      'Run podvisor as a node agent in the foreground, as the kubelet runs. Pods come from a static-pod\n' +
      'directory (--pod-manifest-path, watched and re-read every 20s), a manifest URL (--manifest-url,\n' +
      'polled every 20s) and the API (`podvisor up -d`; kept in the root dir across restarts). The agent\n' +
      'serves the kubelet API on <root>/podvisor.sock (mode 0600) and, with --port, on TCP with TLS and the\n' +
      'bearer token in <root>/token (a kubeconfig for kubectl is written to <root>/kubeconfig).\n' +
      'A manifest that fails to load is reported and changes nothing: the pods it had keep running.\n' +
      'The agent is a CRI client of the runtime service (--container-runtime-endpoint; for the process\n' +
      'runtime, `podvisor runtime serve` is started on demand and started again if it dies). On SIGTERM or\n' +
      'SIGINT the agent stops serving and exits; the containers keep running with the runtime, and the next\n' +
      'start takes them over (pods no source has any more are then terminated). One agent per root dir: a\n' +
      'second one exits 1 naming the first.\n' +
      'With --kubeconfig the agent joins that cluster as a node: it registers the Node and its Lease, runs\n' +
      'the pods bound to it and the static pods (mirrored), and serves the kubelet port (--port, default\n' +
      '10250) with TLS, client certificates (--client-ca-file), TokenReview and SubjectAccessReview.',
    examples: [
      'podvisor agent --pod-manifest-path /etc/podvisor/manifests',
      'podvisor agent --port 10250 --logging-format json',
      'podvisor agent --kubeconfig /etc/podvisor/node.kubeconfig --client-ca-file /etc/kubernetes/pki/ca.crt',
      'podvisor agent status',
    ],
    flags: [
      ...flags.agentFlagSpecs,
      { name: 'pod-manifest-path', type: 'string', valueName: 'DIR', usage: "Directory of static pod manifests, as the kubelet's staticPodPath." },
      { name: 'manifest-url', type: 'string', valueName: 'URL', usage: "URL of a pod manifest to poll, as the kubelet's staticPodURL." },
      {
        name: 'file-check-frequency',
        type: 'string',
        default: '20s',
        valueName: 'DURATION',
        usage: 'How often the static pod directory is re-read besides change notifications.',
      },
      {
        name: 'horizontal-pod-autoscaler-sync-period',
        type: 'string',
        default: '15s',
        valueName: 'DURATION',
        usage: "How often each HorizontalPodAutoscaler is reconciled, as kube-controller-manager's flag.",
      },
      { name: 'http-check-frequency', type: 'string', default: '20s', valueName: 'DURATION', usage: 'How often the manifest URL is fetched.' },
      { name: 'node-name', type: 'string', valueName: 'NAME', usage: "The node's name (default: this host's name, lowercased)." },
      { name: 'address', type: 'string', default: '0.0.0.0', valueName: 'IP', usage: 'IP address the TCP listeners bind.' },
      { name: 'port', type: 'string', valueName: 'N', usage: 'Serve HTTPS (TLS and bearer token) on this port; unset: only the unix socket.' },
      {
        name: 'read-only-port',
        type: 'string',
        default: '0',
        valueName: 'N',
        usage: 'Unauthenticated read-only port (health, pods, stats, metrics); 0 disables it.',
      },
      { name: 'tls-cert-file', type: 'string', valueName: 'FILE', usage: 'Serving certificate (default: one generated into <root>/pki).' },
      { name: 'tls-private-key-file', type: 'string', valueName: 'FILE', usage: 'Private key of --tls-cert-file.' },
      {
        name: 'anonymous-auth',
        type: 'boolean',
        default: false,
        usage: 'Serve TCP requests without a token as system:anonymous, authorized by RBAC (only with a loopback --address).',
      },
      ...clusterFlagSpecs,
      { name: 'logging-format', type: 'string', values: ['text', 'json'], default: 'text', usage: 'Log format on stderr: klog text or JSON.' },
    ],
    run: (parsed, io) => runAgent(parsed, io, flags.agentSettings),
  });

let foregroundCommand: Promise<Command> | undefined;

export const agentCommand: Command = {
  name,
  summary,
  async run(argv: string[], io: CommandIO) {
    if (argv[0] === 'status') return (await import('./agent-status.js')).agentStatusCommand.run(argv.slice(1), io);
    if (argv[0] === 'stop') return (await import('./agent-stop.js')).agentStopCommand.run(argv.slice(1), io);
    foregroundCommand ??= import('./agent-flags.js').then(foreground);
    return (await foregroundCommand).run(argv, io);
  },
};

/**
 * The agent is long-lived and mostly idle between bursts (an `up -d` of many pods): V8's defaults grow
 * the young generation to 32 MB and the old generation's limit generously after such a burst, and keep
 * that memory. A young generation that stays at its initial size, and old-generation limits sized for
 * memory rather than throughput, keep the agent's RSS near what it holds (both flags are read by V8 as
 * the heap grows, so setting them now takes effect).
 */
function keepHeapSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--optimize-for-size');
}

async function runAgent(parsed: ParsedArgs, io: CommandIO, agentSettings: (parsed: ParsedArgs, io: CommandIO) => AgentSettings): Promise<number> {
  const { defaultNodeName } = await import('../config/load.js');
  let cfg;
  let settings: AgentSettings;
  let cluster;
  try {
    settings = agentSettings(parsed, io);
    const port = portFlag(parsed, 'port');
    const readOnlyPort = portFlag(parsed, 'read-only-port') ?? 0;
    const address = String(parsed.flags.address);
    const anonymousAuth = parsed.flags['anonymous-auth'] === true;
    const manifestURL = parsed.flags['manifest-url'] as string | undefined;
    cluster = clusterSettings(parsed, io, { ...(port !== undefined ? { port } : {}), readOnlyPort, ...(manifestURL ? { manifestURL } : {}), anonymousAuth });
    if (cluster) await checkClusterInputs(cluster);
    const registration = cluster
      ? {}
      : await nodeRegistration({
          ...(parsed.flags['node-labels'] ? { nodeLabels: String(parsed.flags['node-labels']) } : {}),
          ...(parsed.flags['register-with-taints'] ? { registerWithTaints: String(parsed.flags['register-with-taints']) } : {}),
        });
    if (anonymousAuth && !cluster && !isLoopbackAddress(address)) {
      throw new UsageError(`--anonymous-auth=true needs a loopback --address (127.0.0.1 or ::1), not "${address}"`);
    }
    const cert = parsed.flags['tls-cert-file'] as string | undefined;
    const key = parsed.flags['tls-private-key-file'] as string | undefined;
    if (!!cert !== !!key) throw new UsageError('--tls-cert-file and --tls-private-key-file go together');
    const manifestPath = parsed.flags['pod-manifest-path'] as string | undefined;
    const url = parsed.flags['manifest-url'] as string | undefined;
    if (url && !/^https?:\/\//.test(url)) throw new UsageError(`invalid argument "${url}" for "--manifest-url" flag: must be an http or https URL`);
    cfg = {
      rootDir: settings.rootDir,
      nodeName: String(parsed.flags['node-name'] || defaultNodeName()),
      node: settings.node,
      ...(settings.crashLoopBackOffMaxSeconds !== undefined ? { crashLoopBackOffMaxSeconds: settings.crashLoopBackOffMaxSeconds } : {}),
      ...(settings.evictionHard ? { evictionHard: settings.evictionHard } : {}),
      ...(settings.managedContainerd ? { managedContainerd: settings.managedContainerd } : {}),
      ...(manifestPath ? { podManifestPath: resolve(io.cwd, manifestPath) } : {}),
      ...(url ? { manifestURL: url } : {}),
      address,
      ...(port !== undefined ? { port } : {}),
      readOnlyPort,
      ...(cert && key ? { tlsCertFile: resolve(io.cwd, cert), tlsPrivateKeyFile: resolve(io.cwd, key) } : {}),
      anonymousAuth,
      loggingFormat: parsed.flags['logging-format'] as 'text' | 'json',
      fileCheckMs: Math.max(1000, durationFlag(parsed, 'file-check-frequency') ?? 20_000),
      httpCheckMs: Math.max(1000, durationFlag(parsed, 'http-check-frequency') ?? 20_000),
      hpaSyncPeriodMs: Math.max(1000, durationFlag(parsed, 'horizontal-pod-autoscaler-sync-period') ?? 15_000),
      version: podvisorVersion(),
      ...(settings.serviceClusterIPRange ? { serviceClusterIPRange: settings.serviceClusterIPRange } : {}),
      ...(settings.nodePortAddresses ? { nodePortAddresses: settings.nodePortAddresses } : {}),
      ...(settings.proxyMode ? { proxyMode: settings.proxyMode } : {}),
      ...(settings.ingressPorts ? { ingressPorts: settings.ingressPorts } : {}),
      ...(registration.labels ? { nodeLabels: registration.labels } : {}),
      ...(registration.taints ? { registerWithTaints: registration.taints } : {}),
      runtimeConfig: {
        containerRuntime: settings.runtime,
        containerRuntimeEndpoint: settings.runtimeEndpoint,
        ...(settings.podPidsLimit !== undefined ? { podPidsLimit: settings.podPidsLimit } : {}),
      },
    };
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'agent');
    throw err;
  }
  keepHeapSmall();
  const { connectAgentRuntime } = await import('../agent/runtime-connection.js');
  const connect = { connectRuntime: (logger: Logger) => connectAgentRuntime(settings, { logger, podvisorScript: podvisorExecutable() }) };
  const run = { stderr: io.stderr, ...connect, ...(io.signal ? { signal: io.signal } : {}) };
  if (cluster) {
    const { runClusterNode } = await import('../agent/run-cluster-node.js');
    const { nodeLabels: _labels, registerWithTaints: _taints, ...common } = cfg;
    return runClusterNode({ ...common, ...cluster }, run);
  }
  const { runStandaloneAgent } = await import('../agent/run-standalone.js');
  return runStandaloneAgent(cfg, run);
}
