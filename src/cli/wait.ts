// `podvisor wait`: kubectl wait against the agent of the root dir — --for=condition=X[=V], delete,
// jsonpath={…}[=V], plus podvisor's running|ready|completed|auto — on a watch, failing at once when a
// pod cannot get there (with its reason, last warning and log tail) instead of waiting out --timeout.

import type { Pod } from '../api/types.js';
import { parseWaitFor, type WaitTarget } from '../kubelet/wait-engine.js';
import { defineCommand, usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest } from './agent-client.js';
import { durationFlag } from './duration.js';
import { apiPath, namespaceFlag, serverErrorText, withAgent, withQuery } from './kube-client.js';
import { reportLoadError } from './output.js';
import { waitForPods, type WaitedPod } from './pod-waiter.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { loadNamedManifests, manifestFlags } from './validate.js';

export const waitCommand = defineCommand({
  name: 'wait',
  summary: 'Wait until pods meet a condition, failing at once when they cannot (kubectl wait)',
  usage: 'podvisor wait ([pod/]NAME... | -f FILENAME... | --all | -l SELECTOR) --for=CONDITION [--timeout=DURATION] [flags]',
  description:
    'Wait for pods of the agent of the root dir, as kubectl wait does: --for=condition=Ready[=true],\n' +
    "--for=delete, --for=jsonpath='{.status.phase}'=Running, or podvisor's --for=running|ready|completed|auto\n" +
    '(what `run --wait` means). Unlike kubectl, a pod that can no longer get there fails the wait at once:\n' +
    'phase Failed, CrashLoopBackOff, a container config error, a container that cannot start, an image\n' +
    'that cannot be pulled (not found, unauthorized, unresolvable registry) after its first back-off.\n' +
    'The failure is printed with the reason, the last warning event and the log tail.\n\n' +
    'Exit status: 0 when every pod met the condition, 1 when one failed or the timeout passed, 2 for invalid input.',
  examples: [
    'podvisor wait pod/web --for=condition=Ready --timeout=60s',
    'podvisor wait -f ci/services.yaml --for=ready',
    "podvisor wait pod/migrate --for=jsonpath='{.status.phase}'=Succeeded",
    'podvisor wait --all --for=delete',
  ],
  flags: [
    ...manifestFlags,
    { name: 'for', type: 'string', valueName: 'CONDITION', usage: 'condition=NAME[=VALUE], delete, jsonpath={…}[=VALUE], running, ready, completed or auto.' },
    { name: 'timeout', type: 'string', valueName: 'DURATION', default: '30s', usage: 'Give up after this long (e.g. 30s, 5m).' },
    { name: 'all', type: 'boolean', usage: 'Every pod of the namespace.' },
    { name: 'selector', short: 'l', type: 'string', valueName: 'SELECTOR', usage: 'Pods matching this label selector.' },
    namespaceFlag,
    rootDirFlag,
  ],
  checkArgs: () => undefined,
  run: (parsed, io) => withAgent(io, () => waitPods(parsed, io)),
});

function namesOf(args: readonly string[]): string[] {
  const out: string[] = [];
  let rest = [...args];
  if (rest[0] && ['pod', 'pods', 'po'].includes(rest[0].toLowerCase())) rest = rest.slice(1);
  for (const a of rest) {
    const slash = a.indexOf('/');
    if (slash < 0) {
      out.push(a);
      continue;
    }
    const type = a.slice(0, slash).toLowerCase();
    if (!['pod', 'pods', 'po'].includes(type)) throw new UsageError(`the server doesn't have a resource type "${a.slice(0, slash)}"`);
    out.push(a.slice(slash + 1));
  }
  return out;
}

async function waitPods(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  const ns = String(parsed.flags.namespace);
  let target: WaitTarget;
  let timeoutMs: number;
  let names: string[];
  let root: string;
  try {
    if (parsed.flags.for === undefined) throw new UsageError('--for must be set');
    try {
      target = parseWaitFor(String(parsed.flags.for));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    timeoutMs = durationFlag(parsed, 'timeout') ?? 30_000;
    names = namesOf(parsed.args);
    const ways = [names.length > 0, files.length > 0, parsed.flags.all === true, parsed.flags.selector !== undefined].filter(Boolean).length;
    if (ways === 0) throw new UsageError('resource(s) were provided, but no name was specified');
    if (ways > 1) throw new UsageError('name cannot be provided when a selector, -f or --all is specified');
    root = rootDirOf(parsed, io);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'wait');
    throw err;
  }

  let pods: WaitedPod[];
  if (files.length > 0) {
    try {
      const loaded = await loadNamedManifests(files, parsed, io);
      pods = loaded.pods.map((p) => ({ ns: p.metadata?.namespace ?? 'default', name: p.metadata?.name ?? '' }));
    } catch (err) {
      return reportLoadError(err, io.stderr);
    }
  } else if (names.length > 0) {
    pods = names.map((name) => ({ ns, name }));
  } else {
    const r = await agentRequest(root, 'GET', withQuery(apiPath('pods', ns), { labelSelector: parsed.flags.selector as string | undefined }));
    if (r.status !== 200) {
      io.stderr.write(serverErrorText(r));
      return 1;
    }
    pods = r.json<{ items: Pod[] }>().items.map((p) => ({ ns: p.metadata?.namespace ?? ns, name: p.metadata?.name ?? '' }));
    if (pods.length === 0) {
      io.stderr.write(`error: no matching resources found\n`);
      return 1;
    }
  }
  // kubectl wait fails at once for a named pod that does not exist (unless waiting for its deletion).
  if (target.kind !== 'delete') {
    for (const p of pods) {
      const r = await agentRequest(root, 'GET', apiPath('pods', p.ns, p.name));
      if (r.status !== 200) {
        io.stderr.write(serverErrorText(r));
        return 1;
      }
    }
  }
  return waitForPods(
    root,
    pods,
    { target, timeoutMs, timeoutText: String(parsed.flags.timeout), onMet: (name) => io.stdout.write(`pod/${name} condition met\n`) },
    io,
  );
}
