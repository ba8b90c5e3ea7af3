// `podvisor down`: delete pods from the agent of the root dir — those of the given manifests, or every
// pod applied through the API (--all) — and wait until they are gone. --grace-period overrides each
// pod's grace; 0 kills at once, as `kubectl delete --grace-period=0 --force`.

import type { Pod } from '../api/types.js';
import { configSourceAnnotation } from '../api/defaults.js';
import { defineCommand, usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import { durationFlag } from './duration.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { AgentGoneError, agentRequest, agentRunning, NoAgentError, replyMessage, stopAgent } from './agent-client.js';
import { reportLoadError } from './output.js';
import { waitPodsGone } from './pod-watch.js';
import { loadNamedManifests, manifestFlags } from './validate.js';
import { deleteWorkloads } from './down-workloads.js';

export const downCommand = defineCommand({
  name: 'down',
  summary: 'Delete pods applied with up -d and wait until they are gone',
  usage: 'podvisor down (-f FILENAME... | --all [--agent]) [--grace-period N] [--timeout DURATION] [flags]',
  description:
    "Delete the pods named in the manifests (or, with --all, every pod applied through the agent's API)\n" +
    'from the agent of the root dir, stopping each gracefully, and wait until they are gone.\n' +
    "Static pods are not deleted this way: remove their manifest from the agent's directory.\n" +
    'The agent keeps running afterwards; --agent then stops it too (and its runtime service, once no\n' +
    'pod is left there): `down --all --agent` is the one teardown of everything `up -d` started.',
  examples: ['podvisor down -f ci/services.yaml', 'podvisor down --all --grace-period 0', 'podvisor down --all --agent'],
  flags: [
    ...manifestFlags,
    { name: 'all', type: 'boolean', usage: 'Delete every pod applied through the API.' },
    { name: 'agent', type: 'boolean', usage: 'Then stop the agent of the root dir as well (podvisor agent stop).' },
    { name: 'grace-period', type: 'int', usage: 'Seconds each pod gets to stop (0: kill at once); default: its terminationGracePeriodSeconds.' },
    { name: 'timeout', type: 'string', valueName: 'DURATION', usage: 'Give up waiting after this long (default 5m).' },
    rootDirFlag,
  ],
  run: down,
});

async function down(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  let code: number;
  try {
    code = await deletePods(parsed, io);
    // --all: a ReplicaSet whose Deployment just went may have made a pod before the garbage collector
    // took it; such pods go too, so that nothing runs when the agent stops.
    for (let round = 0; parsed.flags.all === true && code !== 2 && round < 3 && (await apiPodsLeft(rootDirOf(parsed, io))); round++) {
      code = Math.max(code, await deletePods(parsed, io));
    }
  } catch (err) {
    // The agent died mid-request or while the pods were awaited: said in a line, not a stack trace.
    if (!(err instanceof AgentGoneError || err instanceof NoAgentError)) throw err;
    io.stderr.write(`error: ${err.message}\n`);
    return 1;
  }
  if (parsed.flags.all !== true || code === 2) return code;
  const rootDir = rootDirOf(parsed, io);
  if (parsed.flags.agent !== true) {
    if (await agentRunning(rootDir)) {
      io.stderr.write(
        `the podvisor agent for ${rootDir} keeps running (static pods and its API stay up); stop it with "podvisor agent stop --root-dir ${rootDir}" or "podvisor down --all --agent --root-dir ${rootDir}"\n`,
      );
    }
    return code;
  }
  try {
    if (await stopAgent(rootDir)) io.stderr.write(`stopped the podvisor agent for ${rootDir}\n`);
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  return code;
}

/** Whether the agent still has pods applied through its API. */
async function apiPodsLeft(rootDir: string): Promise<boolean> {
  const list = await agentRequest(rootDir, 'GET', '/api/v1/pods');
  if (list.status !== 200) return false;
  return list.json<{ items: Pod[] }>().items.some((p) => p.metadata?.annotations?.[configSourceAnnotation] === 'api');
}

async function deletePods(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  let timeoutMs: number;
  let rootDir: string;
  try {
    if ((files.length === 0) === (parsed.flags.all !== true)) throw new UsageError('specify either -f or --all');
    if (parsed.flags.agent === true && parsed.flags.all !== true) throw new UsageError('--agent goes with --all: the agent serves every pod of the root dir');
    timeoutMs = durationFlag(parsed, 'timeout') ?? 300_000;
    rootDir = rootDirOf(parsed, io);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'down');
    throw err;
  }
  const grace = parsed.flags['grace-period'] as number | undefined;
  let targets: Array<{ ns: string; name: string; owned?: boolean }>;
  let workloadsCode = 0;
  try {
    if (files.length > 0) {
      const loaded = await loadNamedManifests(files, parsed, io);
      // Workloads first, so their controllers make no new pods; their pods go by propagation.
      workloadsCode = await deleteWorkloads(rootDir, loaded.objects, io);
      targets = loaded.pods.map((p) => ({ ns: p.metadata?.namespace ?? 'default', name: p.metadata?.name ?? '' }));
    } else {
      workloadsCode = await deleteWorkloads(rootDir, 'all', io);
      const list = await agentRequest(rootDir, 'GET', '/api/v1/pods');
      targets = list
        .json<{ items: Pod[] }>()
        .items.filter((p) => p.metadata?.annotations?.[configSourceAnnotation] === 'api')
        .map((p) => ({ ns: p.metadata?.namespace ?? 'default', name: p.metadata?.name ?? '', owned: (p.metadata?.ownerReferences ?? []).length > 0 }));
    }
  } catch (err) {
    if (err instanceof NoAgentError) {
      io.stderr.write(`no podvisor agent runs for root dir ${rootDir}: nothing to delete\n`);
      return 0;
    }
    if (err instanceof AgentGoneError) throw err;
    return reportLoadError(err, io.stderr);
  }

  // The deletions go out together (each only marks its pod; the kubelet stops them side by side).
  const q = grace !== undefined ? `?gracePeriodSeconds=${Math.max(0, grace)}` : '';
  let replies;
  try {
    replies = await Promise.all(
      targets.map((t) => agentRequest(rootDir, 'DELETE', `/api/v1/namespaces/${encodeURIComponent(t.ns)}/pods/${encodeURIComponent(t.name)}${q}`)),
    );
  } catch (err) {
    if (err instanceof NoAgentError) {
      io.stderr.write(`no podvisor agent runs for root dir ${rootDir}: nothing to delete\n`);
      return 0;
    }
    throw err;
  }
  let code = workloadsCode;
  const deleting: typeof targets = [];
  targets.forEach((t, i) => {
    const r = replies[i]!;
    if (r.status === 200) deleting.push(t);
    // A workload's pod may be gone with its workload already.
    else if (r.status === 404) {
      if (!t.owned) io.stderr.write(`pod/${t.name} not found: nothing to delete\n`);
    } else {
      const m = replyMessage(r);
      io.stderr.write(`Error from server (${m.reason}): ${m.message}\n`);
      code = 1;
    }
  });
  // One list and a watch, however many pods: each is reported as the watch sees it go.
  const left = await waitPodsGone(rootDir, deleting, { timeoutMs, signal: io.signal, onGone: (t) => io.stdout.write(`pod "${t.name}" deleted\n`) });
  if (left.length > 0) {
    for (const t of left) io.stderr.write(`pod/${t.name}: still terminating after ${String(parsed.flags.timeout ?? '5m')}\n`);
    return 1;
  }
  return code;
}
