// `podvisor up -d`: apply the pods (and the ConfigMaps and Secrets they reference) to the agent of the
// root dir (started on demand) — create, update where the API server's rules allow, and replace
// (delete gracefully, create anew) a pod whose spec changed, as compose recreates a service — then wait until each pod is running, ready or completed, and exit
// as `run` does (0 all made it, 1 any failed, 2 invalid input).

import { defaultNodeName } from '../config/load.js';
import type { PodWaitMode } from '../kubelet/wait-engine.js';
import { usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import { agentFlagSpecs, agentSettings, durationFlag } from './agent-flags.js';
import { ensureAgent } from './agent-client.js';
import { waitForPods } from './pod-waiter.js';
import { applyObjects } from './apply-objects.js';
import { checkAgentRuntime } from './runtime-check.js';
import { waitForWorkloads } from './workload-waiter.js';
import { loadFlaggedManifests, noFilenameMessage } from './validate.js';

/** The flags `up` gains for -d (the foreground `up` ignores them but --grace-period). */
export const detachFlags = [
  { name: 'detach', short: 'd', type: 'boolean' as const, usage: 'Apply the pods to the agent (started if none runs) and return once --wait holds.' },
  {
    name: 'wait',
    type: 'string' as const,
    values: ['running', 'ready', 'completed', 'auto'],
    valueName: 'CONDITION',
    usage: 'With -d: what to wait for in each pod (default running).',
  },
  { name: 'timeout', type: 'string' as const, valueName: 'DURATION', usage: 'With -d: give up waiting after this long (default 5m).' },
  {
    name: 'port',
    type: 'int' as const,
    usage:
      'With -d: the agent started on demand also serves the Kubernetes API over HTTPS on this port (0: any free one) and writes <root-dir>/kubeconfig for kubectl.',
  },
  { name: 'grace-period', type: 'int' as const, usage: 'Seconds each pod gets to stop when it is torn down (default: its terminationGracePeriodSeconds).' },
];

/** The agent flags given on this command line, passed on to an agent started on demand. */
export function agentArgsFrom(parsed: ParsedArgs): string[] {
  const out: string[] = [];
  for (const spec of agentFlagSpecs) {
    if (spec.name === 'root-dir' || !parsed.given.has(spec.name)) continue;
    out.push(`--${spec.name}=${String(parsed.flags[spec.name])}`);
  }
  return out;
}

export async function upDetached(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  if (files.length === 0) return usageFailure(io, noFilenameMessage, 'up');
  await (await import('./runtime-choice.js')).chooseRuntimeFor(files, parsed, io);
  let settings;
  let timeoutMs: number;
  try {
    if (parsed.given.has('for') || parsed.given.has('logs') || parsed.given.has('output')) {
      throw new UsageError('--for, --logs and -o apply to the foreground up, not to up -d');
    }
    settings = agentSettings(parsed, io);
    timeoutMs = durationFlag(parsed, 'timeout') ?? 300_000;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'up');
    throw err;
  }
  const wait = (parsed.flags.wait as PodWaitMode | undefined) ?? 'running';
  const loaded = await loadFlaggedManifests(files, parsed, io, { runtime: settings.runtime, nodeName: defaultNodeName() });
  if (typeof loaded === 'number') return loaded;
  const root = settings.rootDir;
  try {
    const port = parsed.flags.port as number | undefined;
    const { started } = await ensureAgent(root, [...agentArgsFrom(parsed), ...(port !== undefined ? [`--port=${port}`] : [])]);
    if (started) io.stderr.write(`started the podvisor agent for ${root} (log: ${root}/agent.log)\n`);
    if (port !== undefined && started) io.stderr.write(`kubectl: export KUBECONFIG=${root}/kubeconfig\n`);
    if (port !== undefined && !started)
      io.stderr.write(`warning: the agent for ${root} already runs: --port applies only when up -d starts it (podvisor agent status shows where it listens)\n`);
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }

  // The agent that already ran may have another runtime than the flags name: its own is checked.
  const refused = await checkAgentRuntime(root, loaded, io);
  if (refused !== 0) return refused;

  // Compose's habit: a pod whose spec changed is recreated, not refused.
  const { code: applyCode, pods: applied, objects } = await applyObjects(root, loaded, io, { immutable: 'replace', namespaces: 'create' });

  // The wait, as run's: every applied pod reaches the condition, every workload rolls out (a Job
  // completes), or one fails with its reason and logs.
  const timeoutText = String(parsed.flags.timeout ?? '5m');
  const waited = await Promise.all([
    waitForPods(root, applied, { target: { kind: 'mode', mode: wait }, timeoutMs, timeoutText }, io),
    waitForWorkloads(root, objects, { timeoutMs, timeoutText }, io),
  ]);
  return Math.max(applyCode, ...waited);
}
