// `podvisor exec POD [-c C] [-i] [-t] -- CMD...`: kubectl exec against the agent of the root dir, over
// the WebSocket channel protocol (v5.channel.k8s.io, else v4) on its unix socket. The command's exit
// code becomes podvisor's, as kubectl's does.

import type { Pod } from '../api/types.js';
import { CH_CLOSE, CH_ERROR, CH_RESIZE, CH_STDERR, CH_STDIN, CH_STDOUT, framed } from '../streaming/channels.js';
import { defineCommand, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest, socketOf } from './agent-client.js';
import { apiPath, namespaceFlag, serverErrorText, withAgent } from './kube-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import WebSocket from 'ws';

export const execCommand = defineCommand({
  name: 'exec',
  summary: 'Run a command in a container of a pod run by the agent',
  usage: 'podvisor exec POD [-c CONTAINER] [-i] [-t] -- COMMAND [ARG...] [flags]',
  description:
    'Run a command in a container of a pod, as kubectl exec does: its output on stdout and stderr,\n' +
    "stdin passed on with -i (a terminal with -t), and its exit code returned as podvisor's.",
  examples: ['podvisor exec web -- cat /etc/hostname', 'podvisor exec -it web -c main -- sh', 'echo hi | podvisor exec -i web -- cat'],
  flags: [
    { name: 'container', short: 'c', type: 'string', valueName: 'NAME', usage: "Container name (default: the pod's first container)." },
    { name: 'stdin', short: 'i', type: 'boolean', usage: 'Pass stdin to the command.' },
    { name: 'tty', short: 't', type: 'boolean', usage: 'Stdin is a terminal (with -i, when it is one).' },
    { name: 'quiet', short: 'q', type: 'boolean', usage: 'Print only what the command prints.' },
    namespaceFlag,
    rootDirFlag,
  ],
  checkArgs: (args) => (args.length === 0 ? 'expected POD' : args.length === 1 ? 'you must specify at least one command for the container' : undefined),
  run: (parsed, io) => withAgent(io, () => exec(parsed, io)),
});

/** The shell's exit code for a command the runtime could not start: 127 not found, 126 not executable. */
export function execFailureCode(message: string): number | undefined {
  if (/executable file not found|no such file or directory/i.test(message)) return 127;
  if (/permission denied|exec format error|is a directory/i.test(message)) return 126;
  return undefined;
}

/** The exit code in an error-channel Status (v4/v5): 0 on Success, the ExitCode cause, or undefined. */
export function exitCodeOf(status: {
  status?: string;
  reason?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}): number | undefined {
  if (status.status === 'Success') return 0;
  if (status.reason !== 'NonZeroExitCode') return undefined;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const n = Number(cause?.message);
  return Number.isInteger(n) ? n : undefined;
}

async function exec(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const [podName, ...command] = parsed.args as [string, ...string[]];
  const root = rootDirOf(parsed, io);
  const ns = String(parsed.flags.namespace);
  const r = await agentRequest(root, 'GET', apiPath('pods', ns, podName));
  if (r.status !== 200) {
    io.stderr.write(serverErrorText(r));
    return 1;
  }
  const pod = r.json<Pod>();
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') {
    io.stderr.write(`error: cannot exec into a container in a completed pod; current phase is ${phase}\n`);
    return 1;
  }
  let container = parsed.flags.container as string | undefined;
  if (!container) {
    const containers = pod.spec?.containers ?? [];
    container = containers[0]?.name ?? '';
    if (containers.length > 1 && parsed.flags.quiet !== true) {
      io.stderr.write(
        `Defaulting container name to ${container}.\nUse 'podvisor describe pod ${podName} -n ${ns}' to see all of the containers in this pod.\n\n`,
      );
    }
  }
  const withStdin = parsed.flags.stdin === true;
  const stdin = io.stdin as NodeJS.ReadStream;
  let tty = parsed.flags.tty === true && withStdin;
  if (tty && !stdin.isTTY) {
    tty = false;
    if (parsed.flags.quiet !== true) io.stderr.write('Unable to use a TTY - input is not a terminal or the right kind of file\n');
  }
  const q = new URLSearchParams();
  for (const c of command) q.append('command', c);
  q.set('container', container);
  q.set('stdout', 'true');
  if (!tty) q.set('stderr', 'true');
  if (withStdin) q.set('stdin', 'true');
  if (tty) q.set('tty', 'true');

  const ws = new WebSocket(`ws+unix://${socketOf(root)}:${apiPath('pods', ns, podName, 'exec')}?${q}`, ['v5.channel.k8s.io', 'v4.channel.k8s.io'], {
    perMessageDeflate: false,
  });
  const send = (ch: number, data: Buffer | string) => {
    if (ws.readyState === ws.OPEN) ws.send(framed(ch, data));
  };

  let restoreTTY = () => {};
  let stopStdin = () => {};
  const done = new Promise<number>((resolveOnce) => {
    let settled = false;
    const resolve = (code: number) => {
      if (settled) return;
      settled = true;
      resolveOnce(code);
    };
    let status: number | undefined;
    let failure: string | undefined;
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (!settled) io.stderr.write(serverErrorText({ status: res.statusCode ?? 0, body, json: <T>() => JSON.parse(body) as T }));
        resolve(1);
      });
    });
    ws.on('error', (err) => {
      failure ??= err.message;
    });
    ws.on('open', () => {
      if (tty) {
        stdin.setRawMode?.(true);
        restoreTTY = () => stdin.setRawMode?.(false);
        const out = io.stdout as NodeJS.WriteStream;
        const resize = () => out.columns && send(CH_RESIZE, JSON.stringify({ Width: out.columns, Height: out.rows }));
        resize();
        out.on('resize', resize);
      }
      if (withStdin) {
        const onData = (d: Buffer | string) => send(CH_STDIN, Buffer.isBuffer(d) ? d : Buffer.from(d));
        const onEnd = () => {
          if (ws.protocol === 'v5.channel.k8s.io') send(CH_CLOSE, Buffer.from([CH_STDIN]));
        };
        stdin.on('data', onData);
        stdin.once('end', onEnd);
        stopStdin = () => {
          stdin.off('data', onData);
          stdin.off('end', onEnd);
          stdin.pause();
        };
      }
    });
    ws.on('message', (m: Buffer) => {
      if (m.length === 0) return;
      const body = m.subarray(1);
      switch (m[0]) {
        case CH_STDOUT:
          io.stdout.write(body);
          break;
        case CH_STDERR:
          io.stderr.write(body);
          break;
        case CH_ERROR: {
          let st: Parameters<typeof exitCodeOf>[0] & { message?: string };
          try {
            st = JSON.parse(body.toString('utf8')) as typeof st;
          } catch {
            st = { status: 'Failure', message: body.toString('utf8') };
          }
          const code = exitCodeOf(st);
          if (code !== undefined) status = code;
          else failure = st.message ?? 'the command failed';
          break;
        }
      }
    });
    ws.on('close', () => {
      if (settled) return;
      if (status !== undefined) {
        if (status !== 0 && parsed.flags.quiet !== true) io.stderr.write(`command terminated with exit code ${status}\n`);
        resolve(status);
      } else {
        io.stderr.write(`error: ${failure ?? 'the connection to the agent closed before the command ended'}\n`);
        // A command that could not be run exits as the shell reports it: 127 not found, 126 not executable.
        const shellCode = failure ? execFailureCode(failure) : undefined;
        if (shellCode !== undefined && parsed.flags.quiet !== true) io.stderr.write(`command terminated with exit code ${shellCode}\n`);
        resolve(shellCode ?? 1);
      }
    });
  });
  const interrupt = () => ws.close();
  io.signal?.addEventListener('abort', interrupt, { once: true });
  try {
    return await done;
  } finally {
    io.signal?.removeEventListener('abort', interrupt);
    stopStdin();
    restoreTTY();
  }
}
