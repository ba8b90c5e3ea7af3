// `podvisor wait`: kubectl wait against the agent of the root dir — --for=condition=X[=V], delete,
// jsonpath={…}[=V], plus podvisor's running|ready|completed|auto — on a watch, failing at once when a
// pod cannot get there (with its reason, last warning and log tail) instead of waiting out --timeout.
// Workloads (deployment/NAME, … or in -f files) are waited for under podvisor's modes as `run` and
// `up -d` wait for them (workload-waiter.ts): rolled out or complete, failing at once when their pods
// are refused (ReplicaFailure, FailedCreate) or cannot run.

import type { Pod } from '../api/types.js';
import { qualifiedName, type ManifestObject } from '../config/object-kinds.js';
import { resolveResource } from '../kubeapi/resource-names.js';
import { resourceTable } from '../kubeapi/resource-table.js';
import { groupVersionOf } from '../kubeapi/resource-def.js';
import { parseWaitFor, type WaitTarget } from '../kubelet/wait-engine.js';
import { defineCommand, usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest } from './agent-client.js';
import { durationFlag } from './duration.js';
import { apiPath, namespaceFlag, serverErrorText, withAgent, withQuery } from './kube-client.js';
import { reportLoadError } from './output.js';
import { waitForPods, type WaitedPod } from './pod-waiter.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { loadNamedManifests, manifestFlags } from './validate.js';
import { objectPath, type AppliedRef } from './object-paths.js';
import { waitedKinds, waitForWorkloads } from './workload-waiter.js';

export const waitCommand = defineCommand({
  name: 'wait',
  summary: 'Wait until pods meet a condition, failing at once when they cannot (kubectl wait)',
  usage: 'podvisor wait ([TYPE/]NAME... | -f FILENAME... | --all | -l SELECTOR) --for=CONDITION [--timeout=DURATION] [flags]',
  description:
    'Wait for pods of the agent of the root dir, as kubectl wait does: --for=condition=Ready[=true],\n' +
    "--for=delete, --for=jsonpath='{.status.phase}'=Running, or podvisor's --for=running|ready|completed|auto\n" +
    '(what `run --wait` means). Unlike kubectl, a pod that can no longer get there fails the wait at once:\n' +
    'phase Failed, CrashLoopBackOff, a container config error, a container that cannot start, an image\n' +
    'that cannot be pulled (not found, unauthorized, unresolvable registry) after its first back-off.\n' +
    'The failure is printed with the reason, the last warning event and the log tail.\n' +
    'Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs (TYPE/NAME, or in -f files) are waited for\n' +
    'under running|ready|completed|auto as `run` waits for them: rolled out, or complete for a Job; one whose\n' +
    'pods are refused (ReplicaFailure, FailedCreate) or cannot run fails the wait at once with the reason.\n\n' +
    'Exit status: 0 when every pod met the condition, 1 when one failed or the timeout passed, 2 for invalid input.',
  examples: [
    'podvisor wait pod/web --for=condition=Ready --timeout=60s',
    'podvisor wait -f ci/services.yaml --for=ready',
    "podvisor wait pod/migrate --for=jsonpath='{.status.phase}'=Succeeded",
    'podvisor wait --all --for=delete',
    'podvisor wait deployment/web --for=auto --timeout=2m',
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

const isPodType = (type: string) => ['pod', 'pods', 'po'].includes(type.toLowerCase());

/** A workload named on the command line (`deployment/web`, `sts/db`). */
interface NamedWorkload {
  kind: string;
  apiVersion: string;
  name: string;
}

/** The pods and workloads the arguments name: `NAME...`, `pod NAME...` or `TYPE/NAME...`. */
function namesOf(args: readonly string[]): { pods: string[]; workloads: NamedWorkload[] } {
  const pods: string[] = [];
  const workloads: NamedWorkload[] = [];
  let rest = [...args];
  if (rest[0] && isPodType(rest[0])) rest = rest.slice(1);
  for (const a of rest) {
    const slash = a.indexOf('/');
    if (slash < 0) {
      pods.push(a);
      continue;
    }
    const type = a.slice(0, slash);
    const name = a.slice(slash + 1);
    if (isPodType(type)) {
      pods.push(name);
      continue;
    }
    const def = resolveResource(resourceTable, type);
    if (!def) throw new UsageError(`the server doesn't have a resource type "${type}"`);
    if (!waitedKinds.has(def.kind)) throw new UsageError(`podvisor wait waits for pods and workloads (${[...waitedKinds].join(', ')}), not ${def.resource}`);
    workloads.push({ kind: def.kind, apiVersion: groupVersionOf(def), name });
  }
  return { pods, workloads };
}

async function waitPods(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  const ns = String(parsed.flags.namespace);
  let target: WaitTarget;
  let timeoutMs: number;
  let names: string[];
  let named: NamedWorkload[];
  let root: string;
  try {
    if (parsed.flags.for === undefined) throw new UsageError('--for must be set');
    try {
      target = parseWaitFor(String(parsed.flags.for));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    timeoutMs = durationFlag(parsed, 'timeout') ?? 30_000;
    ({ pods: names, workloads: named } = namesOf(parsed.args));
    const ways = [names.length + named.length > 0, files.length > 0, parsed.flags.all === true, parsed.flags.selector !== undefined].filter(Boolean).length;
    if (ways === 0) throw new UsageError('resource(s) were provided, but no name was specified');
    if (ways > 1) throw new UsageError('name cannot be provided when a selector, -f or --all is specified');
    if (named.length > 0 && target.kind !== 'mode') throw new UsageError(workloadForMessage);
    root = rootDirOf(parsed, io);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'wait');
    throw err;
  }

  let pods: WaitedPod[];
  let workloads: ManifestObject[] = [];
  if (files.length > 0) {
    try {
      const loaded = await loadNamedManifests(files, parsed, io);
      pods = loaded.pods.map((p) => ({ ns: p.metadata?.namespace ?? 'default', name: p.metadata?.name ?? '' }));
      workloads = loaded.objects.filter((o) => waitedKinds.has(o.kind ?? ''));
    } catch (err) {
      return reportLoadError(err, io.stderr);
    }
    if (workloads.length > 0 && target.kind !== 'mode') return usageFailure(io, workloadForMessage, 'wait');
  } else if (names.length + named.length > 0) {
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
  // The workloads as the agent has them (a name that is not there fails at once, as a pod's does).
  const refs: AppliedRef[] = [];
  for (const w of [...named.map((n) => ({ apiVersion: n.apiVersion, kind: n.kind, metadata: { name: n.name, namespace: ns } })), ...workloads]) {
    const wns = w.metadata?.namespace ?? ns;
    const r = await agentRequest(root, 'GET', objectPath(w.apiVersion ?? '', w.kind ?? '', wns, w.metadata?.name ?? ''));
    if (r.status !== 200) {
      io.stderr.write(serverErrorText(r));
      return 1;
    }
    refs.push({
      kind: w.kind ?? '',
      ns: wns,
      name: w.metadata?.name ?? '',
      object: { ...r.json<ManifestObject>(), apiVersion: w.apiVersion, kind: w.kind as ManifestObject['kind'] },
    });
  }
  const timeoutText = String(parsed.flags.timeout);
  const [podsCode, workloadsCode] = await Promise.all([
    pods.length > 0
      ? waitForPods(root, pods, { target, timeoutMs, timeoutText, onMet: (name) => io.stdout.write(`pod/${name} condition met\n`) }, io)
      : Promise.resolve(0),
    waitForWorkloads(root, refs, { timeoutMs, timeoutText, onMet: (ref) => io.stdout.write(`${qualifiedName(ref.object)} condition met\n`) }, io),
  ]);
  return podsCode !== 0 ? podsCode : workloadsCode;
}

const workloadForMessage = 'a workload is waited for with --for=running, ready, completed or auto (rolled out, or complete for a Job)';
