// `podvisor top pods [NAME]`: kubectl top pod against the agent of the root dir, from the
// metrics.k8s.io/v1beta1 PodMetrics it serves (CPU in millicores, memory in MiB, as kubectl prints).

import { defineCommand, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest } from './agent-client.js';
import { namespaceFlag, serverErrorText, withAgent, withQuery } from './kube-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { getTableSettings, tabwriteRows } from '../printers/tabwriter.js';

export const topCommand = defineCommand({
  name: 'top',
  summary: 'Show the CPU and memory use of pods run by the agent',
  usage: 'podvisor top pods [NAME] [--containers] [-A] [-l SELECTOR] [--sort-by cpu|memory] [flags]',
  examples: ['podvisor top pods', 'podvisor top pod web --containers', 'podvisor top pods -A --sort-by memory'],
  flags: [
    { name: 'containers', type: 'boolean', usage: 'One line per container.' },
    { name: 'all-namespaces', short: 'A', type: 'boolean', usage: 'Pods of every namespace.' },
    { name: 'selector', short: 'l', type: 'string', valueName: 'SELECTOR', usage: 'Label selector (e.g. app=web).' },
    { name: 'sort-by', type: 'string', values: ['cpu', 'memory'], usage: 'Sort by this use, highest first.' },
    { name: 'no-headers', type: 'boolean', usage: 'No header row.' },
    namespaceFlag,
    rootDirFlag,
  ],
  checkArgs: (args) => {
    if (args.length === 0 || !['pod', 'pods', 'po'].includes(args[0]!)) return 'podvisor top reports pods: podvisor top pods [NAME]';
    return args.length > 2 ? `unexpected argument "${args[2]}"` : undefined;
  },
  run: (parsed, io) => withAgent(io, () => top(parsed, io)),
});

interface PodMetrics {
  metadata: { name: string; namespace: string };
  containers: Array<{ name: string; usage: { cpu: string; memory: string } }>;
}

/** Nanocores of a CPU quantity (`12345n`, `3m`, `1`). */
async function nanocores(q: string): Promise<bigint> {
  const m = /^([0-9]+)n$/.exec(q);
  if (m) return BigInt(m[1]!);
  const { parseQuantity } = await import('../api/quantity.js');
  return parseQuantity(q).milliValue() * 1_000_000n;
}

/** Bytes of a memory quantity (`1024Ki`, `12Mi`, `1000`). */
async function bytes(q: string): Promise<bigint> {
  const m = /^([0-9]+)Ki$/.exec(q);
  if (m) return BigInt(m[1]!) * 1024n;
  const { parseQuantity } = await import('../api/quantity.js');
  return parseQuantity(q).value();
}

// kubectl prints MilliValue (rounded up) and whole MiB (rounded down).
const cpuCell = (n: bigint) => `${(n + 999_999n) / 1_000_000n}m`;
const memCell = (b: bigint) => `${b / (1024n * 1024n)}Mi`;

async function top(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const root = rootDirOf(parsed, io);
  const all = parsed.flags['all-namespaces'] === true;
  const ns = String(parsed.flags.namespace);
  const name = parsed.args[1];
  const base = all ? '/apis/metrics.k8s.io/v1beta1/pods' : `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(ns)}/pods`;
  const r = await agentRequest(
    root,
    'GET',
    name && !all
      ? `${base}/${encodeURIComponent(name)}`
      : withQuery(base, { labelSelector: parsed.flags.selector as string | undefined, fieldSelector: name ? `metadata.name=${name}` : undefined }),
  );
  if (r.status === 404 && name) {
    io.stderr.write(`Error from server (NotFound): podmetrics.metrics.k8s.io "${ns}/${name}" not found\n`);
    return 1;
  }
  if (r.status !== 200) {
    io.stderr.write(serverErrorText(r));
    return 1;
  }
  const body = r.json<PodMetrics & { items?: PodMetrics[] }>();
  const items = name && !all ? [body] : (body.items ?? []);
  if (items.length === 0) {
    io.stderr.write('error: metrics not available yet\n');
    return 1;
  }
  const rows: Array<{ ns: string; pod: string; container?: string; cpu: bigint; mem: bigint }> = [];
  for (const p of items) {
    const cs = await Promise.all(p.containers.map(async (c) => ({ container: c.name, cpu: await nanocores(c.usage.cpu), mem: await bytes(c.usage.memory) })));
    if (parsed.flags.containers === true) for (const c of cs) rows.push({ ns: p.metadata.namespace, pod: p.metadata.name, ...c });
    else rows.push({ ns: p.metadata.namespace, pod: p.metadata.name, cpu: cs.reduce((a, c) => a + c.cpu, 0n), mem: cs.reduce((a, c) => a + c.mem, 0n) });
  }
  const sortBy = parsed.flags['sort-by'] as string | undefined;
  rows.sort((a, b) => {
    if (sortBy === 'cpu' && a.cpu !== b.cpu) return a.cpu > b.cpu ? -1 : 1;
    if (sortBy === 'memory' && a.mem !== b.mem) return a.mem > b.mem ? -1 : 1;
    if (sortBy) return 0;
    if (all && a.ns !== b.ns) return a.ns < b.ns ? -1 : 1;
    return a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : (a.container ?? '') < (b.container ?? '') ? -1 : 1;
  });
  const containers = parsed.flags.containers === true;
  // kubectl ends every cell with a tab, the last one too: its column is padded like the others.
  const header = [...(all ? ['NAMESPACE'] : []), containers ? 'POD' : 'NAME', ...(containers ? ['NAME'] : []), 'CPU(cores)', 'MEMORY(bytes)', ''];
  const table = rows.map((x) => [...(all ? [x.ns] : []), x.pod, ...(containers ? [x.container ?? ''] : []), cpuCell(x.cpu), memCell(x.mem), '']);
  io.stdout.write(tabwriteRows(parsed.flags['no-headers'] === true ? table : [header, ...table], getTableSettings));
  return 0;
}
