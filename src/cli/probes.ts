// `podvisor probes POD`: why a pod is not Ready, or was restarted — the probe history the agent keeps
// (GET /podvisor/v1/namespaces/{ns}/pods/{name}/probes) as a timeline, a sparkline of results and one
// line per probe saying where it stands; -w follows new results, -o json prints the document.

import { createInterface } from 'node:readline';
import { defineCommand, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest, agentStream } from './agent-client.js';
import { namespaceFlag, serverErrorText, withAgent } from './kube-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { probeHistoryPath, type ProbeHistoryDocument } from '../server/probe-routes.js';
import type { ProbeHistoryItem } from '../printers/probe-timeline.js';

const probeKinds = ['liveness', 'readiness', 'startup'];

export const probesCommand = defineCommand({
  name: 'probes',
  summary: "Show a pod's probe results: timeline, streaks, what they changed, where each probe stands",
  usage: 'podvisor probes POD [-c CONTAINER] [--probe liveness|readiness|startup] [-w] [-o json] [-n NS] [flags]',
  description:
    "Print the results of the pod's probes the agent has kept (the last 100 per probe, since the agent\n" +
    'started: a restarted agent starts with an empty history), oldest first: TIME, CONTAINER, PROBE,\n' +
    'RESULT, LATENCY, STREAK (how many of this result in a row, against the threshold it counts toward),\n' +
    'EFFECT (Ready, NotReady, Started, Restart, or - when it changed nothing) and OUTPUT (what the probe\n' +
    'said, at most 1 KiB). Then a sparkline per probe (▁ success, █ failure, ? error) and one line per\n' +
    'probe saying where it stands, e.g. "web readiness failing 2/3 since 4s: still Ready, NotReady at the\n' +
    'next failure". -w prints the kept results, then each new one as it comes, until interrupted.',
  examples: ['podvisor probes web', 'podvisor probes web -c app --probe readiness', 'podvisor probes web -w', 'podvisor probes web -o json'],
  flags: [
    { name: 'container', short: 'c', type: 'string', valueName: 'NAME', usage: 'Only the probes of this container.' },
    { name: 'probe', type: 'string', values: probeKinds, usage: 'Only this probe.' },
    { name: 'watch', short: 'w', type: 'boolean', usage: 'After the kept results, print each new one as it comes.' },
    { name: 'output', short: 'o', type: 'string', values: ['table', 'json'], default: 'table', usage: 'Output format.' },
    namespaceFlag,
    rootDirFlag,
  ],
  checkArgs: (args) => (args.length === 0 ? 'expected POD' : args.length > 1 ? `unexpected argument "${args[1]}"` : undefined),
  run: (parsed, io) => withAgent(io, () => probes(parsed, io)),
});

function filterOf(parsed: ParsedArgs): (e: ProbeHistoryItem) => boolean {
  const container = parsed.flags.container as string | undefined;
  const probe = parsed.flags.probe as string | undefined;
  return (e) => (!container || e.container === container) && (!probe || e.probe === probe);
}

async function probes(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const root = rootDirOf(parsed, io);
  const name = parsed.args[0]!.replace(/^(pod|pods|po)\//, '');
  const path = probeHistoryPath(String(parsed.flags.namespace), name);
  const keep = filterOf(parsed);
  const json = parsed.flags.output === 'json';
  if (parsed.flags.watch === true) return watch(root, path, keep, json, io);

  const r = await agentRequest(root, 'GET', path);
  if (r.status !== 200) {
    io.stderr.write(serverErrorText(r));
    return 1;
  }
  const doc = r.json<ProbeHistoryDocument>();
  const items = (doc.items as ProbeHistoryItem[]).filter(keep);
  if (json) {
    io.stdout.write(`${JSON.stringify({ kind: 'ProbeHistory', items }, null, 2)}\n`);
    return 0;
  }
  if (items.length === 0) {
    io.stdout.write(`No probe results for pod ${name}.\n`);
    return 0;
  }
  const { formatProbeTable, formatProbeStandings, formatSparklines } = await import('../printers/probe-timeline.js');
  io.stdout.write(formatProbeTable(items));
  io.stdout.write(`\n${formatSparklines(items)}\n${formatProbeStandings(items, Date.now())}`);
  return 0;
}

async function watch(root: string, path: string, keep: (e: ProbeHistoryItem) => boolean, json: boolean, io: CommandIO): Promise<number> {
  const res = await agentStream(root, 'GET', `${path}?watch=1`);
  if (res.statusCode !== 200) {
    const chunks: Buffer[] = [];
    for await (const x of res) chunks.push(x as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    io.stderr.write(serverErrorText({ status: res.statusCode ?? 0, body: text, json: <T>() => JSON.parse(text) as T }));
    return 1;
  }
  const { RememberingTabwriter, getTableSettings } = await import('../printers/tabwriter.js');
  const { timelineRow } = await import('../printers/probe-timeline.js');
  const table = new RememberingTabwriter(getTableSettings, [14, 12, 11, 9, 9, 8, 10]);
  if (!json) io.stdout.write(table.flushRows([['TIME', 'CONTAINER', 'PROBE', 'RESULT', 'LATENCY', 'STREAK', 'EFFECT', 'OUTPUT']]));
  const lines = createInterface({ input: res, crlfDelay: Infinity });
  // readline ends on the stream's end, which a destroyed stream never emits: close both.
  const stop = () => (lines.close(), res.destroy());
  io.signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const line of lines) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as ProbeHistoryItem;
      if (!keep(e)) continue;
      io.stdout.write(json ? `${line}\n` : table.flushRows([timelineRow(e)]));
    }
  } catch {
    // interrupted, or the agent went away
  } finally {
    io.signal?.removeEventListener('abort', stop);
  }
  return 0;
}
