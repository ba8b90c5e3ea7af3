// `podvisor describe pod NAME...`: kubectl describe pod against the agent of the root dir — the pod,
// then its events (involvedObject name, namespace and uid), printed in kubectl's layout, with each
// probe's last result from the agent's probe history.

import type { Event, Pod } from '../api/types.js';
import { defineCommand, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest } from './agent-client.js';
import { probeHistoryPath, type ProbeHistoryDocument } from '../server/probe-routes.js';
import { apiPath, namespaceFlag, serverErrorText, withAgent, withQuery } from './kube-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';

export const describeCommand = defineCommand({
  name: 'describe',
  summary: 'Show a pod in detail: containers, conditions, events (kubectl describe)',
  usage: 'podvisor describe pod NAME... [-n NS] [flags]',
  examples: ['podvisor describe pod web', 'podvisor describe pod/web'],
  flags: [namespaceFlag, rootDirFlag],
  checkArgs: (args) => {
    const names = args[0]?.includes('/') ? args : args.slice(1);
    const type = args[0]?.split('/')[0]?.toLowerCase();
    if (!type || !['pod', 'pods', 'po'].includes(type)) return 'podvisor describe shows pods: podvisor describe pod NAME';
    return names.length === 0 ? 'expected the name of a pod: podvisor describe pod NAME' : undefined;
  },
  run: (parsed, io) => withAgent(io, () => describe(parsed, io)),
});

async function describe(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const names = parsed.args[0]!.includes('/') ? parsed.args.map((a) => a.split('/')[1] ?? '') : parsed.args.slice(1);
  const root = rootDirOf(parsed, io);
  const ns = String(parsed.flags.namespace);
  const { describePod } = await import('../printers/describe-pod.js');
  let code = 0;
  let first = true;
  for (const name of names) {
    const r = await agentRequest(root, 'GET', apiPath('pods', ns, name));
    if (r.status !== 200) {
      io.stderr.write(serverErrorText(r));
      code = 1;
      continue;
    }
    const pod = r.json<Pod>();
    const selector = `involvedObject.name=${name},involvedObject.namespace=${ns},involvedObject.uid=${pod.metadata?.uid ?? ''}`;
    const ev = await agentRequest(root, 'GET', withQuery(apiPath('events', ns), { fieldSelector: selector }));
    const events = ev.status === 200 ? ev.json<{ items: Event[] }>().items : [];
    // The probe history beside the probe specs; an agent without it leaves describe as kubectl's.
    const ph = await agentRequest(root, 'GET', probeHistoryPath(ns, name));
    const probes = ph.status === 200 ? ph.json<ProbeHistoryDocument>().items : [];
    if (!first) io.stdout.write('\n\n');
    first = false;
    io.stdout.write(describePod(pod, events, Date.now(), probes));
  }
  return code;
}
