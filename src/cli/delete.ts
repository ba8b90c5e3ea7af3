// `podvisor delete pod NAME... | -f FILE...`: kubectl delete against the agent of the root dir. Each
// pod stops gracefully (--grace-period overrides its own; --now is 1 s, 0 kills at once); the command
// prints `pod "web" deleted` and, unless --wait=false, returns once the pod is gone.

import { defineCommand, usageFailure, type CommandIO, type ParsedArgs } from './args.js';
import { loadNamedManifests } from './validate.js';
import { agentRequest } from './agent-client.js';
import { durationFlag } from './duration.js';
import { apiPath, namespaceFlag, serverErrorText, withAgent, withQuery, type CoreResource } from './kube-client.js';
import { reportLoadError } from './output.js';
import { waitPodsGone } from './pod-watch.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';

const resources: Record<string, CoreResource> = {
  pod: 'pods',
  pods: 'pods',
  po: 'pods',
  configmap: 'configmaps',
  configmaps: 'configmaps',
  cm: 'configmaps',
  secret: 'secrets',
  secrets: 'secrets',
};
const singular: Record<string, string> = { pods: 'pod', configmaps: 'configmap', secrets: 'secret' };

export const deleteCommand = defineCommand({
  name: 'delete',
  summary: 'Delete pods (or ConfigMaps, Secrets) from the agent and wait until they are gone',
  usage: 'podvisor delete (pod NAME... | -f FILENAME...) [--grace-period N] [--now] [--wait=false] [flags]',
  description:
    'Delete pods from the agent of the root dir, as kubectl delete does: each gets its grace period\n' +
    '(or --grace-period; --now is 1 second, 0 kills at once) and the command returns once they are\n' +
    'gone. ConfigMaps and Secrets (named, or found in the files) are deleted at once.',
  examples: ['podvisor delete pod web', 'podvisor delete -f web.yaml --now', 'podvisor delete pod web --grace-period 0'],
  flags: [
    { name: 'filename', short: 'f', type: 'strings', valueName: 'FILE', default: [], usage: 'Delete the objects of these manifests.' },
    { name: 'recursive', short: 'R', type: 'boolean', usage: 'Process the directories given with -f recursively.' },
    { name: 'grace-period', type: 'int', default: -1, usage: 'Seconds each pod gets to stop (-1: its own terminationGracePeriodSeconds; 0: kill at once).' },
    { name: 'now', type: 'boolean', usage: 'Stop the pods at once (a grace period of 1 second).' },
    { name: 'force', type: 'boolean', usage: 'Accepted for kubectl compatibility: with --grace-period=0 the pods are killed at once.' },
    { name: 'wait', type: 'boolean', default: true, usage: 'Return only once the objects are gone.' },
    { name: 'timeout', type: 'string', valueName: 'DURATION', usage: 'Give up waiting after this long (default: no limit).' },
    { name: 'ignore-not-found', type: 'boolean', usage: 'A missing object is not an error.' },
    namespaceFlag,
    rootDirFlag,
  ],
  checkArgs: () => undefined,
  run: (parsed, io) => withAgent(io, () => del(parsed, io)),
});

interface Target {
  resource: CoreResource;
  ns: string;
  name: string;
  uid?: string;
}

async function targetsOf(parsed: ParsedArgs, io: CommandIO): Promise<Target[] | number> {
  const files = parsed.flags.filename as string[];
  const ns = String(parsed.flags.namespace);
  if (files.length > 0) {
    if (parsed.args.length > 0)
      return usageFailure(
        io,
        "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'podvisor delete pod/web') or with -f",
        'delete',
      );
    try {
      const loaded = await loadNamedManifests(files, parsed, io);
      const of = (resource: CoreResource, objs: Array<{ metadata?: { name?: string; namespace?: string } }>) =>
        objs.map((o) => ({ resource, ns: o.metadata?.namespace ?? ns, name: o.metadata?.name ?? '' }));
      return [...of('pods', loaded.pods), ...of('configmaps', loaded.configMaps), ...of('secrets', loaded.secrets)];
    } catch (err) {
      return reportLoadError(err, io.stderr);
    }
  }
  const args = parsed.args.flatMap((a) => (a.includes('/') ? a.split('/', 2) : [a]));
  // `pod/a pod/b` and `pod a b` both name pods.
  const out: Target[] = [];
  if (parsed.args.every((a) => a.includes('/'))) {
    for (const a of parsed.args) {
      const [t, n] = a.split('/', 2) as [string, string];
      const r = resources[t.toLowerCase()];
      if (!r) return usageFailure(io, `the server doesn't have a resource type "${t}"`, 'delete');
      out.push({ resource: r, ns, name: n });
    }
    if (out.length === 0) return usageFailure(io, 'You must provide one or more resources by argument or filename.', 'delete');
    return out;
  }
  const [type, ...names] = args as [string, ...string[]];
  const resource = resources[type.toLowerCase()];
  if (!resource) return usageFailure(io, `the server doesn't have a resource type "${type}"`, 'delete');
  if (names.length === 0) return usageFailure(io, 'resource(s) were provided, but no name was specified', 'delete');
  return names.map((name) => ({ resource, ns, name }));
}

async function del(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  if (parsed.args.length === 0 && (parsed.flags.filename as string[]).length === 0) {
    return usageFailure(io, 'You must provide one or more resources by argument or filename.', 'delete');
  }
  let timeoutMs: number | undefined;
  try {
    timeoutMs = durationFlag(parsed, 'timeout');
  } catch (err) {
    return usageFailure(io, (err as Error).message, 'delete');
  }
  const targets = await targetsOf(parsed, io);
  if (typeof targets === 'number') return targets;
  const root = rootDirOf(parsed, io);
  let grace = parsed.flags['grace-period'] as number;
  if (parsed.flags.now === true) {
    if (grace >= 0) return usageFailure(io, '--now and --grace-period cannot be specified together', 'delete');
    grace = 1;
  }
  let code = 0;
  const waiting: Target[] = [];
  for (const t of targets) {
    const q = t.resource === 'pods' && grace >= 0 ? { gracePeriodSeconds: String(grace) } : {};
    const r = await agentRequest(root, 'DELETE', withQuery(apiPath(t.resource, t.ns, t.name), q), { propagationPolicy: 'Background' });
    if (r.status === 200) {
      io.stdout.write(`${singular[t.resource]} "${t.name}" deleted\n`);
      if (t.resource === 'pods') waiting.push({ ...t, uid: r.json<{ metadata?: { uid?: string } }>().metadata?.uid });
      continue;
    }
    if (r.status === 404 && parsed.flags['ignore-not-found'] === true) continue;
    io.stderr.write(serverErrorText(r));
    code = 1;
  }
  if (parsed.flags.wait !== true) return code;
  // Gone, or replaced by a new pod of that name: seen by one list and a watch, not by polling each pod.
  const left = await waitPodsGone(root, waiting, { timeoutMs: timeoutMs ?? Infinity, signal: io.signal });
  if (left.length > 0) {
    io.stderr.write(`error: timed out waiting for the condition on ${left.map((t) => `pods/${t.name}`).join(', ')}\n`);
    return 1;
  }
  return code;
}
