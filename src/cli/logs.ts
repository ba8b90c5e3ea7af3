// `podvisor logs`: a container's log from the agent of the root dir, with kubectl's flags and rules
// (a pod with several containers needs -c, and the error names the choices).

import type { Pod } from '../api/types.js';
import { defineCommand, usageFailure, UsageError, type CommandIO, type ParsedArgs } from './args.js';
import { durationFlag } from './duration.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { agentRequest, agentStream, replyMessage } from './agent-client.js';
import { withAgent } from './kube-client.js';

export const logsCommand = defineCommand({
  name: 'logs',
  summary: 'Print the logs of a container of a pod run by the agent',
  usage: 'podvisor logs POD [-c CONTAINER] [-f] [--previous] [--tail N] [--since DURATION] [--timestamps] [--all-containers] [flags]',
  examples: ['podvisor logs web', 'podvisor logs web -c sidecar -f', 'podvisor logs job --previous --tail 20'],
  flags: [
    { name: 'container', short: 'c', type: 'string', valueName: 'NAME', usage: 'Print the logs of this container.' },
    { name: 'follow', short: 'f', type: 'boolean', usage: 'Keep streaming new lines until the container stops.' },
    { name: 'previous', short: 'p', type: 'boolean', usage: 'The previous (terminated) instance of the container.' },
    { name: 'tail', type: 'int', default: -1, usage: 'Only the last N lines (-1: all).' },
    { name: 'since', type: 'string', valueName: 'DURATION', usage: 'Only lines newer than this (e.g. 5s, 2m, 3h).' },
    { name: 'timestamps', type: 'boolean', usage: 'Prefix each line with its RFC 3339 timestamp.' },
    { name: 'all-containers', type: 'boolean', usage: 'The logs of every container of the pod.' },
    { name: 'limit-bytes', type: 'int', default: 0, usage: 'Print at most this many bytes (0: no limit).' },
    { name: 'namespace', short: 'n', type: 'string', default: 'default', valueName: 'NS', usage: 'Namespace of the pod.' },
    rootDirFlag,
  ],
  checkArgs: (args) => (args.length === 0 ? 'expected POD' : args.length > 1 ? `unexpected argument "${args[1]}"` : undefined),
  run: logs,
});

function errorLine(status: number, reason: string, message: string): string {
  // kubectl words a missing container choice as its own error, the rest as the server's.
  if (status === 400 && message.startsWith('a container name must be specified')) return `error: ${message}\n`;
  return `Error from server (${reason}): ${message}\n`;
}

async function logs(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const name = parsed.args[0]!;
  let rootDir: string;
  let sinceMs: number | undefined;
  try {
    rootDir = rootDirOf(parsed, io);
    sinceMs = durationFlag(parsed, 'since');
    if (parsed.flags['all-containers'] === true && parsed.flags.container) throw new UsageError('--all-containers and --container cannot be used together');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, 'logs');
    throw err;
  }
  const ns = String(parsed.flags.namespace);
  const q = new URLSearchParams();
  if (parsed.flags.follow === true) q.set('follow', 'true');
  if (parsed.flags.previous === true) q.set('previous', 'true');
  if ((parsed.flags.tail as number) >= 0) q.set('tailLines', String(parsed.flags.tail));
  if (sinceMs !== undefined) q.set('sinceSeconds', String(Math.max(1, Math.ceil(sinceMs / 1000))));
  if (parsed.flags.timestamps === true) q.set('timestamps', 'true');
  if ((parsed.flags['limit-bytes'] as number) > 0) q.set('limitBytes', String(parsed.flags['limit-bytes']));
  const base = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}`;

  return withAgent(io, async () => {
    let containers: Array<string | undefined> = [parsed.flags.container as string | undefined];
    if (parsed.flags['all-containers'] === true) {
      const r = await agentRequest(rootDir, 'GET', base);
      if (r.status !== 200) {
        const m = replyMessage(r);
        io.stderr.write(errorLine(r.status, m.reason, m.message));
        return 1;
      }
      const pod = r.json<Pod>();
      containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
    }
    const one = async (c: string | undefined): Promise<number> => {
      const qc = new URLSearchParams(q);
      if (c) qc.set('container', c);
      const res = await agentStream(rootDir, 'GET', `${base}/log?${qc}`);
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        for await (const x of res) chunks.push(x as Buffer);
        const text = Buffer.concat(chunks).toString('utf8');
        const m = replyMessage({ status: res.statusCode ?? 0, body: text, json: <T>() => JSON.parse(text) as T });
        io.stderr.write(errorLine(res.statusCode ?? 0, m.reason, m.message));
        return 1;
      }
      const stop = () => res.destroy();
      io.signal?.addEventListener('abort', stop, { once: true });
      try {
        for await (const chunk of res) io.stdout.write(chunk as Buffer);
      } catch {
        // interrupted
      } finally {
        io.signal?.removeEventListener('abort', stop);
      }
      return 0;
    };
    if (parsed.flags.follow === true && containers.length > 1) {
      return Math.max(...(await Promise.all(containers.map(one))));
    }
    let code = 0;
    for (const c of containers) code = Math.max(code, await one(c));
    return code;
  });
}
