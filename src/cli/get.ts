// `podvisor get TYPE[,TYPE…]|all [NAME]`: kubectl get against the agent of the root dir. The types are
// the API's own (its resource table: plural, singular, short names, kind, `all` category), so every
// served kind — pods, nodes, namespaces, workloads… — is reached by the names kubectl takes. Tables
// come from the server (as=Table, the printer the API serves kubectl with) and are rendered here as
// kubectl renders them; -w follows the watch, one row per event.

import type { IncomingMessage } from 'node:http';
import { defineCommand, usageFailure, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest, agentStream, type AgentReply } from './agent-client.js';
import { namespaceFlag, serverErrorText, tableAccept, withAgent, withQuery } from './kube-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { tableRows, type Table, type TableColumnDefinition } from '../printers/tables.js';
import { getTableSettings, RememberingTabwriter } from '../printers/tabwriter.js';
import { jsonPathTemplate, jsonPathText, jsonPathValues } from '../printers/jsonpath.js';
import { resourceTable } from '../kubeapi/resource-table.js';
import { groupVersionOf, type ResourceDef } from '../kubeapi/resource-def.js';
import { categoryMembers, resolveResource, resourceChoices, resourcePath } from '../kubeapi/resource-names.js';

/** A kind as the table names it: its path, its kind for list items, its name for `-o name`. */
type ResourceName = ResourceDef;

export const getCommand = defineCommand({
  name: 'get',
  summary: 'List the objects of the agent (pods, nodes, events, services, workloads…), as kubectl get prints them',
  usage:
    'podvisor get (pods|nodes|events|svc|endpoints|endpointslices|deploy|rs|sts|ds|rc|jobs|cronjobs|hpa|pdb|pc|limits|quota|netpol|ing|pv|pvc|sc|ns|cm|all)[,TYPE...] [NAME...] [-o wide|json|yaml|name|jsonpath=…|custom-columns=…] [-w] [-A] [-l SELECTOR] [-L KEY] [-n NS] [flags]',
  examples: [
    "podvisor get pods -o jsonpath='{.items[*].status.podIP}'",
    'podvisor get pods -o custom-columns=NAME:.metadata.name,IP:.status.podIP',
    'podvisor get pods',
    'podvisor get pods -o wide -A',
    'podvisor get pod web -o yaml',
    'podvisor get nodes -o wide',
    'podvisor get pods -l app=web -w',
    'podvisor get events',
    'podvisor get deploy,rs',
    'podvisor get all',
  ],
  flags: [
    {
      name: 'output',
      short: 'o',
      type: 'string',
      valueName: 'FORMAT',
      usage:
        'Output format: wide, json, yaml, name, jsonpath=TEMPLATE, custom-columns=NAME:.PATH,… (go-template: use kubectl, whose printers read podvisor the same).',
    },
    { name: 'label-columns', short: 'L', type: 'strings', valueName: 'KEYS', usage: 'A column per label key (e.g. -L app,tier).' },
    { name: 'watch', short: 'w', type: 'boolean', usage: 'After listing, watch for changes and print a row for each.' },
    { name: 'watch-only', type: 'boolean', usage: 'Watch for changes without listing first.' },
    { name: 'output-watch-events', type: 'boolean', usage: 'With --watch: an EVENT column (ADDED, MODIFIED, DELETED).' },
    { name: 'all-namespaces', short: 'A', type: 'boolean', usage: 'Objects of every namespace.' },
    { name: 'selector', short: 'l', type: 'string', valueName: 'SELECTOR', usage: 'Label selector (e.g. app=web,tier!=db).' },
    { name: 'field-selector', type: 'string', valueName: 'SELECTOR', usage: 'Field selector (e.g. status.phase=Running).' },
    { name: 'show-labels', type: 'boolean', usage: 'A LABELS column.' },
    { name: 'no-headers', type: 'boolean', usage: 'No header row.' },
    namespaceFlag,
    rootDirFlag,
  ],
  checkArgs: (args) =>
    args.length === 0 ? `You must specify the type of resource to get. Choose from: ${[...resourceChoices(resourceTable), 'all'].join(', ')}` : undefined,
  run: (parsed, io) => withAgent(io, () => get(parsed, io)),
});

interface Target extends ResourceName {
  names: string[];
}

/** The path of a target's collection (ns undefined: every namespace) or of one object. */
function pathOf(t: ResourceName, ns: string | undefined, name?: string): string {
  return resourcePath(t, ns, name);
}

function targetOf(args: string[]): Target | string {
  let [type, ...names] = args as [string, ...string[]];
  if (type.includes('/')) {
    const [t, n] = type.split('/', 2) as [string, string];
    type = t;
    names = [n, ...names];
  }
  const r = resolveResource(resourceTable, type);
  if (!r) return `the server doesn't have a resource type "${type}"`;
  return { ...r, names };
}

/**
 * `-o jsonpath=…` (kubectl prints the template over the object, or over a List of several) and
 * `-o custom-columns=HEADER:PATH,…` (a column per path, `<none>` where it selects nothing).
 */
function templateOutput(output: string): ((objects: unknown[], single: boolean) => string) | undefined {
  const asList = (objects: unknown[], single: boolean) =>
    single ? objects[0] : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects };
  if (output.startsWith('jsonpath=')) {
    const t = jsonPathTemplate(output.slice('jsonpath='.length));
    return (objects, single) => t.print(asList(objects, single));
  }
  if (output.startsWith('custom-columns=')) {
    const columns = output
      .slice('custom-columns='.length)
      .split(',')
      .map((spec) => {
        const at = spec.indexOf(':');
        if (at <= 0) throw new Error(`unexpected custom-columns spec: ${spec}, expected <header>:<json-path-expr>`);
        return { header: spec.slice(0, at), path: spec.slice(at + 1) };
      });
    return (objects) => {
      const rows = [columns.map((c) => c.header)];
      for (const o of objects)
        rows.push(
          columns.map((c) => {
            const v = jsonPathValues(c.path, o);
            return v.length ? v.map(jsonPathText).join(',') : '<none>';
          }),
        );
      return new RememberingTabwriter(getTableSettings).flushRows(rows);
    };
  }
  if (['wide', 'json', 'yaml', 'name'].includes(output)) return undefined;
  if (output.startsWith('go-template') || output.startsWith('template'))
    throw new Error(`-o ${output.split('=')[0]} is kubectl's own: run kubectl against the agent (podvisor up -d --port N writes <root-dir>/kubeconfig)`);
  throw new Error(`unable to match a printer suitable for the output format "${output}", allowed formats are: custom-columns,json,jsonpath,name,wide,yaml`);
}

/** kubectl pads the EVENT cells to one width (printers' formattedEventType). */
function formattedEventType(type: string): string {
  return type === 'ADDED' || type === 'DELETED' || type === 'ERROR' ? type.padEnd(8) : type;
}

async function* lines(res: IncomingMessage): AsyncGenerator<string> {
  let buf = '';
  for await (const chunk of res) {
    buf += (chunk as Buffer).toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) yield line;
    }
  }
  if (buf.trim()) yield buf;
}

async function get(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const type = parsed.args[0]!;
  if (type.toLowerCase() === 'all' || (type.includes(',') && !type.includes('/'))) return getMany(parsed, io, type);
  const target = targetOf(parsed.args);
  if (typeof target === 'string') {
    io.stderr.write(`error: ${target}\n`);
    return 1;
  }
  const root = rootDirOf(parsed, io);
  const rawOutput = parsed.flags.output as string | undefined;
  let template: ((objects: unknown[], single: boolean) => string) | undefined;
  try {
    template = rawOutput === undefined ? undefined : templateOutput(rawOutput);
  } catch (err) {
    return usageFailure(io, (err as Error).message, 'get');
  }
  const output = template ? 'json' : rawOutput;
  if (template && (parsed.flags.watch === true || parsed.flags['watch-only'] === true))
    return usageFailure(io, 'jsonpath and custom-columns output go with a list, not with --watch here', 'get');
  const all = parsed.flags['all-namespaces'] === true;
  const ns = all ? undefined : String(parsed.flags.namespace);
  const watch = parsed.flags.watch === true || parsed.flags['watch-only'] === true;
  if (watch && target.names.length > 1)
    return usageFailure(io, 'watch is only supported on individual resources and resource collections, but 2 resources were found', 'get');
  if (all && target.names.length > 0) return usageFailure(io, 'a resource cannot be retrieved by name across all namespaces', 'get');
  const asTable = output === undefined || output === 'wide';
  const headers: Record<string, string> = asTable ? { Accept: tableAccept } : {};
  const selectors = {
    labelSelector: parsed.flags.selector as string | undefined,
    fieldSelector: [parsed.flags['field-selector'] as string | undefined, watch && target.names[0] ? `metadata.name=${target.names[0]}` : undefined]
      .filter(Boolean)
      .join(','),
  };
  const render = {
    wide: output === 'wide',
    withNamespace: all && target.namespaced,
    showLabels: parsed.flags['show-labels'] === true,
    labelColumns: (parsed.flags['label-columns'] as string[] | undefined) ?? [],
  };
  const watchEvents = parsed.flags['output-watch-events'] === true;

  // The list (or the named objects), as kubectl prints it.
  let resourceVersion = '';
  let columns: TableColumnDefinition[] = [];
  let headerPrinted = parsed.flags['no-headers'] === true;
  // kubectl's tabwriter remembers column widths across flushes: watch rows line up with the list.
  const tabwriter = new RememberingTabwriter(getTableSettings);
  const printTable = (t: Table, eventType?: string) => {
    if (t.columnDefinitions.length) columns = t.columnDefinitions;
    let rows = tableRows(t, { ...render, noHeaders: headerPrinted, columns });
    if (watchEvents) rows = rows.map((r, i) => [i === 0 && !headerPrinted ? 'EVENT' : formattedEventType(eventType ?? 'ADDED'), ...r]);
    if (t.rows.length > 0) headerPrinted = true;
    io.stdout.write(tabwriter.flushRows(rows));
  };
  const objects: unknown[] = [];
  const printed = { count: 0 };
  let code = 0;
  if (parsed.flags['watch-only'] !== true) {
    if (target.names.length > 0) {
      for (const name of target.names) {
        const r = await agentRequest(root, 'GET', pathOf(target, ns, name), undefined, headers);
        if (r.status !== 200) {
          io.stderr.write(serverErrorText(r));
          code = 1;
          continue;
        }
        const obj = r.json<Table & { metadata?: { resourceVersion?: string } }>();
        resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
        if (asTable && obj.kind === 'Table') printTable(obj);
        else objects.push(obj);
      }
    } else {
      const r: AgentReply = await agentRequest(root, 'GET', withQuery(pathOf(target, ns), selectors), undefined, headers);
      if (r.status !== 200) {
        io.stderr.write(serverErrorText(r));
        return 1;
      }
      const list = r.json<{ kind: string; metadata?: { resourceVersion?: string }; items?: unknown[]; rows?: unknown[] }>();
      resourceVersion = list.metadata?.resourceVersion ?? '';
      const count = list.kind === 'Table' ? (list.rows ?? []).length : (list.items ?? []).length;
      if (asTable && list.kind === 'Table') {
        if (count > 0) printTable(list as unknown as Table);
        else columns = (list as unknown as Table).columnDefinitions;
      } else {
        for (const item of list.items ?? []) objects.push({ apiVersion: groupVersionOf(target), kind: target.kind, ...(item as object) });
      }
      if (count === 0 && !watch && output !== 'json' && output !== 'yaml') {
        io.stderr.write(ns === undefined || !target.namespaced ? 'No resources found\n' : `No resources found in ${ns} namespace.\n`);
      }
      if (template) {
        io.stdout.write(template(objects, false));
        return 0;
      }
      if (!asTable && output !== 'name' && !watch) {
        io.stdout.write(
          await formatObjects([{ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '', selfLink: '' }, items: objects }], output as 'json' | 'yaml'),
        );
        return 0;
      }
    }
    if (template) {
      if (objects.length) io.stdout.write(template(objects, objects.length === 1));
      return code;
    }
    if (!asTable) await printObjects(io, objects, output!, target.singular, watch ? printed : undefined);
  }
  if (!watch) return code;

  // The watch: every event from the list's resourceVersion on.
  const res = await agentStream(root, 'GET', withQuery(pathOf(target, ns), { ...selectors, watch: 'true', resourceVersion }), undefined, headers);
  if (res.statusCode !== 200) {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    io.stderr.write(serverErrorText({ status: res.statusCode ?? 0, body, json: <T>() => JSON.parse(body) as T }));
    return 1;
  }
  const stop = () => res.destroy();
  io.signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const line of lines(res)) {
      const ev = JSON.parse(line) as { type: string; object: Table & { kind: string; message?: string } };
      if (ev.type === 'BOOKMARK') continue;
      if (ev.type === 'ERROR') {
        io.stderr.write(`error: ${ev.object.message ?? 'watch failed'}\n`);
        return 1;
      }
      if (asTable && ev.object.kind === 'Table') printTable(ev.object, ev.type);
      else if (output === 'name') io.stdout.write(`${target.singular}/${(ev.object as { metadata?: { name?: string } }).metadata?.name ?? ''}\n`);
      else if (watchEvents) io.stdout.write(await formatObjects([{ type: ev.type, object: ev.object }], output as 'json' | 'yaml', printed));
      else io.stdout.write(await formatObjects([ev.object], output as 'json' | 'yaml', printed));
    }
  } catch (err) {
    if (!io.signal?.aborted) throw err;
  } finally {
    io.signal?.removeEventListener('abort', stop);
  }
  return code;
}

/**
 * Several types at once (`get deploy,rs`, `get all`), as kubectl prints them: a table per type that
 * has objects, names as `deployment.apps/web`, a blank line between tables; `-o name` one name a line.
 */
async function getMany(parsed: ParsedArgs, io: CommandIO, type: string): Promise<number> {
  const output = parsed.flags.output as string | undefined;
  if (parsed.args.length > 1) return usageFailure(io, 'names go with one resource type: TYPE NAME or TYPE/NAME', 'get');
  if (parsed.flags.watch === true || parsed.flags['watch-only'] === true) return usageFailure(io, 'watch is only supported on one resource type', 'get');
  if (output !== undefined && output !== 'wide' && output !== 'name') return usageFailure(io, '-o with several resource types: wide or name', 'get');
  const targets: ResourceName[] = type.toLowerCase() === 'all' ? categoryMembers(resourceTable, 'all') : [];
  for (const t of targets.length ? [] : type.split(',')) {
    const r = resolveResource(resourceTable, t);
    if (!r) {
      io.stderr.write(`error: the server doesn't have a resource type "${t}"\n`);
      return 1;
    }
    targets.push(r);
  }
  const root = rootDirOf(parsed, io);
  const all = parsed.flags['all-namespaces'] === true;
  const ns = all ? undefined : String(parsed.flags.namespace);
  const selectors = { labelSelector: parsed.flags.selector as string | undefined, fieldSelector: parsed.flags['field-selector'] as string | undefined };
  let printed = 0;
  for (const t of targets) {
    const r = await agentRequest(root, 'GET', withQuery(pathOf(t, ns), selectors), undefined, { Accept: tableAccept });
    if (r.status !== 200) {
      io.stderr.write(serverErrorText(r));
      return 1;
    }
    const table = r.json<Table>();
    if (table.kind !== 'Table' || table.rows.length === 0) continue;
    const prefix = `${t.singular}${t.group ? `.${t.group}` : ''}/`;
    const named = { ...table, rows: table.rows.map((row) => ({ ...row, cells: [`${prefix}${String(row.cells[0])}`, ...row.cells.slice(1)] })) };
    if (output === 'name') {
      for (const row of named.rows) io.stdout.write(`${String(row.cells[0])}\n`);
      continue;
    }
    const rows = tableRows(named, {
      wide: output === 'wide',
      withNamespace: all && t.namespaced,
      showLabels: parsed.flags['show-labels'] === true,
      labelColumns: (parsed.flags['label-columns'] as string[] | undefined) ?? [],
      noHeaders: parsed.flags['no-headers'] === true,
    });
    io.stdout.write(`${printed++ > 0 ? '\n' : ''}${new RememberingTabwriter(getTableSettings).flushRows(rows)}`);
  }
  if (printed === 0 && output !== 'name') io.stderr.write(ns === undefined ? 'No resources found\n' : `No resources found in ${ns} namespace.\n`);
  return 0;
}

/** Objects printed one after another; YAML documents after the first get `---` (kubectl's YAMLPrinter). */
async function formatObjects(objs: unknown[], format: 'json' | 'yaml', printed?: { count: number }): Promise<string> {
  // kubectl get prints keys sorted, as its printers see decoded maps.
  const { formatObject } = await import('../printers/json-yaml.js');
  return objs
    .map((o) => (printed && format === 'yaml' && printed.count++ > 0 ? `---\n${formatObject(o, format, 'sorted')}` : formatObject(o, format, 'sorted')))
    .join('');
}

/** The objects as one (a List when several), or — under a watch — each on its own, as kubectl -w prints them. */
async function printObjects(io: CommandIO, objects: unknown[], output: string, singular: string, each?: { count: number }): Promise<void> {
  if (objects.length === 0) return;
  if (output === 'name') {
    for (const o of objects) io.stdout.write(`${singular}/${(o as { metadata?: { name?: string } }).metadata?.name ?? ''}\n`);
    return;
  }
  if (each) {
    io.stdout.write(await formatObjects(objects, output as 'json' | 'yaml', each));
    return;
  }
  const one = objects.length === 1 ? objects[0] : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '', selfLink: '' }, items: objects };
  io.stdout.write(await formatObjects([one], output as 'json' | 'yaml'));
}
