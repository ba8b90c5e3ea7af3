// `podvisor apply -f FILE...`: kubectl apply against the agent of the root dir (started on demand):
// each Pod, ConfigMap and Secret is created, or replaced where the API server's update rules allow,
// and printed as `pod/web created|configured|unchanged`.

import { defaultNodeName } from '../config/load.js';
import { parseWaitFor, type WaitTarget } from '../kubelet/wait-engine.js';
import { defineCommand, usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import { durationFlag } from './duration.js';
import { waitForPods } from './pod-waiter.js';
import { ensureAgent } from './agent-client.js';
import { applyObjects } from './apply-objects.js';
import { checkAgentRuntime, checkBeforeAgentStart } from './runtime-check.js';
import { waitForWorkloads } from './workload-waiter.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { loadFlaggedManifests, manifestFlags, noFilenameMessage } from './validate.js';

export const applyCommand = defineCommand({
  name: 'apply',
  summary: 'Create or update pods, ConfigMaps, Secrets, Services and workloads on the agent, as kubectl apply',
  usage: 'podvisor apply -f FILENAME... [flags]',
  description:
    'Create the objects of the manifests on the agent of the root dir, or update those that exist\n' +
    '(a live pod may change only its images, activeDeadlineSeconds and metadata, as on a cluster;\n' +
    '--force replaces a pod whose other fields changed, and `up -d` always does).\n' +
    'ConfigMaps and Secrets are applied before the pods that reference them, Services and workloads\n' +
    '(Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs) before pods. The agent is started\n' +
    '(with its default flags) when none runs for the root dir. With --wait, apply then waits as\n' +
    '`podvisor wait --for` does, failing at once with the reason and logs when a pod cannot get there.',
  examples: ['podvisor apply -f web.yaml', 'podvisor apply -f manifests/ -R'],
  flags: [
    ...manifestFlags,
    {
      name: 'wait',
      type: 'string',
      valueName: 'CONDITION',
      usage: 'After applying, wait until each pod meets this (running, ready, completed, auto, condition=X, jsonpath=…), as podvisor wait --for.',
    },
    { name: 'timeout', type: 'string', valueName: 'DURATION', usage: 'With --wait: give up after this long (default 5m).' },
    { name: 'force', type: 'boolean', usage: 'Replace (delete gracefully, then create) a pod whose change the API refuses, as kubectl replace --force.' },
    rootDirFlag,
  ],
  run: apply,
});

async function apply(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  if (files.length === 0) return usageFailure(io, noFilenameMessage, 'apply');
  const root = rootDirOf(parsed, io);
  let target: WaitTarget | undefined;
  let timeoutMs: number;
  try {
    if (parsed.flags.wait !== undefined) {
      try {
        target = parseWaitFor(String(parsed.flags.wait));
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
    }
    timeoutMs = durationFlag(parsed, 'timeout') ?? 300_000;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'apply');
    throw err;
  }
  const loaded = await loadFlaggedManifests(files, parsed, io, { nodeName: defaultNodeName() });
  if (typeof loaded === 'number') return loaded;
  const unrunnable = await checkBeforeAgentStart(root, loaded, io);
  if (unrunnable !== 0) return unrunnable;
  try {
    const { started } = await ensureAgent(root, []);
    if (started) io.stderr.write(`started the podvisor agent for ${root} (log: ${root}/agent.log)\n`);
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  // Nothing is applied when the agent's runtime cannot run some of it (a container without a command on the process runtime).
  const refused = await checkAgentRuntime(root, loaded, io);
  if (refused !== 0) return refused;
  const { code, pods, objects } = await applyObjects(root, loaded, io, { immutable: parsed.flags.force === true ? 'replace' : 'fail' });
  if (!target) return code;
  // Pods meet the condition asked; workloads roll out (a Job completes), as kubectl rollout status.
  const timeoutText = String(parsed.flags.timeout ?? '5m');
  const waited = await Promise.all([
    waitForPods(root, pods, { target, timeoutMs, timeoutText }, io),
    waitForWorkloads(root, objects, { timeoutMs, timeoutText }, io),
  ]);
  return Math.max(code, ...waited);
}
