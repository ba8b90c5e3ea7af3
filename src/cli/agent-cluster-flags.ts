// The flags of `podvisor agent` that join a cluster (--kubeconfig and what goes with it), and their
// check into the cluster node's configuration: a bad value is a usage error before anything starts.

import { resolve } from 'node:path';
import type { ClusterNodeConfig } from '../agent/run-cluster-node.js';
import type { Taint } from '../api/types.js';
import { UsageError, type CommandIO, type FlagSpec, type ParsedArgs } from './args.js';
import { durationFlag } from './duration.js';

export const clusterFlagSpecs: FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    valueName: 'FILE',
    usage: 'Join the cluster of this kubeconfig as a node (user system:node:<node-name>); see docs/cluster.md.',
  },
  { name: 'node-labels', type: 'string', valueName: 'K=V,…', usage: 'Labels to register the node with.' },
  { name: 'register-with-taints', type: 'string', valueName: 'K=V:EFFECT,…', usage: 'Taints to register the node with (on its first registration).' },
  {
    name: 'node-status-update-frequency',
    type: 'string',
    default: '10s',
    valueName: 'DURATION',
    usage: 'With --kubeconfig: how often the node status is posted.',
  },
  { name: 'node-ip', type: 'string', valueName: 'IP', usage: "With --kubeconfig: the node's InternalIP (default: the first non-loopback IPv4 address)." },
  {
    name: 'client-ca-file',
    type: 'string',
    valueName: 'FILE',
    usage: "With --kubeconfig: CA bundle that client certificates on the kubelet port must chain to (the API server's kubelet client certificate).",
  },
  {
    name: 'authentication-token-webhook',
    type: 'boolean',
    default: true,
    usage: 'With --kubeconfig: authenticate bearer tokens on the kubelet port with TokenReview.',
  },
  {
    name: 'authorization-mode',
    type: 'string',
    values: ['Webhook', 'AlwaysAllow'],
    default: 'Webhook',
    usage: 'With --kubeconfig: authorise kubelet-port requests with SubjectAccessReview (Webhook) or not at all (AlwaysAllow).',
  },
];

/** Cluster-mode settings from the flags, or undefined without --kubeconfig. */
export function clusterSettings(
  parsed: ParsedArgs,
  io: Pick<CommandIO, 'cwd'>,
  base: { port?: number; readOnlyPort: number; manifestURL?: string; anonymousAuth: boolean },
):
  | Pick<
      ClusterNodeConfig,
      | 'kubeconfig'
      | 'nodeLabels'
      | 'registerWithTaints'
      | 'nodeStatusUpdateFrequencyMs'
      | 'nodeIP'
      | 'clientCAFile'
      | 'authenticationTokenWebhook'
      | 'authorizationMode'
      | 'port'
    >
  | undefined {
  const kubeconfig = parsed.flags.kubeconfig as string | undefined;
  if (!kubeconfig) {
    for (const name of ['node-ip', 'client-ca-file']) {
      if (parsed.flags[name]) throw new UsageError(`flag "--${name}" needs --kubeconfig`);
    }
    return undefined;
  }
  if (base.manifestURL) throw new UsageError('--manifest-url is not supported with --kubeconfig');
  if (base.readOnlyPort !== 0) throw new UsageError('--read-only-port is not supported with --kubeconfig');
  const authorizationMode = parsed.flags['authorization-mode'] as 'Webhook' | 'AlwaysAllow';
  if (base.anonymousAuth && authorizationMode === 'AlwaysAllow')
    throw new UsageError('--anonymous-auth=true with --kubeconfig needs --authorization-mode=Webhook');
  const freq = durationFlag(parsed, 'node-status-update-frequency') ?? 10_000;
  if (freq < 1000)
    throw new UsageError(
      `invalid argument "${String(parsed.flags['node-status-update-frequency'])}" for "--node-status-update-frequency" flag: must be at least 1s`,
    );
  const caFile = parsed.flags['client-ca-file'] as string | undefined;
  const out = {
    kubeconfig: resolve(io.cwd, kubeconfig),
    nodeStatusUpdateFrequencyMs: freq,
    authenticationTokenWebhook: parsed.flags['authentication-token-webhook'] !== false,
    authorizationMode,
    port: base.port ?? 10250,
    ...(parsed.flags['node-labels'] ? { nodeLabels: String(parsed.flags['node-labels']) } : {}),
    ...(parsed.flags['register-with-taints'] ? { registerWithTaints: String(parsed.flags['register-with-taints']) } : {}),
    ...(parsed.flags['node-ip'] ? { nodeIP: String(parsed.flags['node-ip']) } : {}),
    ...(caFile ? { clientCAFile: resolve(io.cwd, caFile) } : {}),
  };
  return out;
}

/** The checks that read files or parse values in the node module: a bad kubeconfig, label or taint is a usage error. */
export async function checkClusterInputs(c: { kubeconfig: string; nodeLabels?: string; registerWithTaints?: string }): Promise<void> {
  const { loadKubeconfig } = await import('../cluster/kubeconfig.js');
  try {
    loadKubeconfig(c.kubeconfig);
  } catch (err) {
    throw new UsageError(`invalid argument "${c.kubeconfig}" for "--kubeconfig" flag: ${(err as Error).message}`);
  }
  await nodeRegistration(c);
}

/** --node-labels and --register-with-taints parsed (both modes register a Node); a bad one is a usage error. */
export async function nodeRegistration(c: {
  nodeLabels?: string;
  registerWithTaints?: string;
}): Promise<{ labels?: Record<string, string>; taints?: Taint[] }> {
  const { parseNodeLabels, parseTaints } = await import('../cluster/node-status.js');
  const { formatFieldError, newPath } = await import('../api/field-errors.js');
  const { validateLabels } = await import('../api/validation/pod.js');
  const out: { labels?: Record<string, string>; taints?: Taint[] } = {};
  for (const [name, v, parse] of [
    ['node-labels', c.nodeLabels, parseNodeLabels],
    ['register-with-taints', c.registerWithTaints, parseTaints],
  ] as const) {
    if (!v) continue;
    try {
      const parsed = (parse as (s: string) => unknown)(v);
      if (name === 'node-labels') out.labels = parsed as Record<string, string>;
      else out.taints = parsed as Taint[];
      // What the API server would refuse in the Node is refused here, before anything starts.
      const labels = name === 'node-labels' ? out.labels : Object.fromEntries((out.taints ?? []).map((t) => [t.key, t.value ?? '']));
      const errs = validateLabels(labels, newPath(name === 'node-labels' ? 'metadata' : 'spec').child(name === 'node-labels' ? 'labels' : 'taints'));
      if (errs.length > 0) throw new Error(errs.map(formatFieldError).join(', '));
    } catch (err) {
      throw new UsageError(`invalid argument "${v}" for "--${name}" flag: ${(err as Error).message}`);
    }
  }
  return out;
}
