// `podvisor port-forward POD [LOCAL:]REMOTE...`: kubectl port-forward against the agent of the root
// dir. Each local connection is carried by its own WebSocket (portforward.k8s.io channels: data 0,
// error 1, each opened by the port) to the agent's pods/portforward over its unix socket.

import { createServer, type Server, type Socket } from 'node:net';
import type { Pod } from '../api/types.js';
import { framed } from '../streaming/channels.js';
import { defineCommand, usageFailure, type CommandIO, type ParsedArgs } from './args.js';
import { agentRequest, socketOf } from './agent-client.js';
import { apiPath, namespaceFlag, serverErrorText, withAgent } from './kube-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import WebSocket from 'ws';

export const portForwardCommand = defineCommand({
  name: 'port-forward',
  summary: 'Forward local ports to a pod run by the agent',
  usage: 'podvisor port-forward POD [LOCAL_PORT:]REMOTE_PORT... [--address ADDR] [flags]',
  description:
    'Listen on local ports and forward each connection to a port of the pod, as kubectl port-forward.\n' +
    '\n' +
    'Pods of the process runtime share the host network: there is no pod network namespace, so the\n' +
    "agent connects to 127.0.0.1:REMOTE_PORT on the pod's host (its container listens there, as a\n" +
    'hostNetwork pod would). LOCAL_PORT may be left empty (:REMOTE_PORT) for a free port, and must\n' +
    'differ from REMOTE_PORT when the agent runs on this host and the container already holds it.',
  examples: ['podvisor port-forward web 8080:80', 'podvisor port-forward web :80', 'podvisor port-forward web 9090 --address 0.0.0.0'],
  flags: [
    { name: 'address', type: 'strings', default: ['localhost'], valueName: 'ADDR', usage: 'Addresses to listen on (localhost: 127.0.0.1 and ::1).' },
    namespaceFlag,
    rootDirFlag,
  ],
  checkArgs: (args) =>
    args.length === 0
      ? 'TYPE/NAME and list of ports are required for port-forward'
      : args.length === 1
        ? 'at least 1 PORT is required for port-forward'
        : undefined,
  run: (parsed, io) => withAgent(io, () => portForward(parsed, io)),
});

interface PortPair {
  local: number;
  remote: number;
}

/** `8080:80`, `:80` (a free local port), `80` (the same port). */
export function parsePortPair(spec: string): PortPair | string {
  const parts = spec.split(':');
  if (parts.length > 2) return `invalid port format '${spec}'`;
  const [l, r] = parts.length === 2 ? [parts[0]!, parts[1]!] : [parts[0]!, parts[0]!];
  const port = (s: string, what: string): number | string => {
    const n = Number(s);
    if (!/^[0-9]+$/.test(s) || n < (what === 'local' ? 0 : 1) || n > 65535)
      return `Error parsing ${what} port '${s}': must be between ${what === 'local' ? 0 : 1} and 65535`;
    return n;
  };
  const local = l === '' ? 0 : port(l, 'local');
  const remote = port(r, 'remote');
  if (typeof local === 'string') return local;
  if (typeof remote === 'string') return remote;
  return { local, remote };
}

async function portForward(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const [target, ...specs] = parsed.args as [string, ...string[]];
  const name = target.startsWith('pod/') ? target.slice(4) : target.startsWith('pods/') ? target.slice(5) : target;
  if (target.includes('/') && name === target) return usageFailure(io, `port-forward reaches pods only, not ${target.split('/')[0]}`, 'port-forward');
  const pairs: PortPair[] = [];
  for (const s of specs) {
    const p = parsePortPair(s);
    if (typeof p === 'string') return usageFailure(io, p, 'port-forward');
    pairs.push(p);
  }
  const root = rootDirOf(parsed, io);
  const ns = String(parsed.flags.namespace);
  const r = await agentRequest(root, 'GET', apiPath('pods', ns, name));
  if (r.status !== 200) {
    io.stderr.write(serverErrorText(r));
    return 1;
  }
  const phase = r.json<Pod>().status?.phase;
  if (phase !== 'Running') {
    io.stderr.write(`error: unable to forward port because pod is not running. Current status=${phase ?? 'Unknown'}\n`);
    return 1;
  }
  const url = (remote: number) => `ws+unix://${socketOf(root)}:${apiPath('pods', ns, name, 'portforward')}?ports=${remote}`;

  const open = new Set<Socket>();
  const forward = (conn: Socket, pair: PortPair) => {
    open.add(conn);
    conn.on('close', () => open.delete(conn));
    io.stdout.write(`Handling connection for ${pair.local}\n`);
    const ws = new WebSocket(url(pair.remote), ['v4.channel.k8s.io', 'portforward.k8s.io'], { perMessageDeflate: false });
    const seen = [false, false];
    const pending: Buffer[] = [];
    conn.on('data', (d: Buffer) => {
      if (ws.readyState === ws.OPEN) ws.send(framed(0, d));
      else pending.push(d);
    });
    conn.on('end', () => ws.close(1000));
    conn.on('error', () => ws.close(1000));
    ws.on('open', () => {
      for (const d of pending.splice(0)) ws.send(framed(0, d));
    });
    ws.on('message', (m: Buffer) => {
      const ch = m[0];
      if (ch !== 0 && ch !== 1) return;
      // The first message of each channel is its port.
      if (!seen[ch]) {
        seen[ch] = true;
        return;
      }
      if (ch === 0) conn.write(m.subarray(1));
      else
        io.stderr.write(
          `E ${new Date().toISOString()} portforward: an error occurred forwarding ${pair.local} -> ${pair.remote}: ${m.subarray(1).toString('utf8')}\n`,
        );
    });
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        io.stderr.write(serverErrorText({ status: res.statusCode ?? 0, body, json: <T>() => JSON.parse(body) as T }));
        conn.destroy();
      });
    });
    ws.on('error', () => conn.destroy());
    ws.on('close', () => conn.end());
  };

  const addresses = (parsed.flags.address as string[]).flatMap((a) => (a === 'localhost' ? ['127.0.0.1', '::1'] : [a]));
  const servers: Server[] = [];
  for (const pair of pairs) {
    for (const addr of addresses) {
      const server = createServer((conn) => forward(conn, pair));
      const ok = await new Promise<boolean>((resolve) => {
        server.once('error', (err: NodeJS.ErrnoException) => {
          // ::1 may not exist on this host; kubectl goes on with the addresses it could bind.
          if (addr === '::1' && addresses.includes('127.0.0.1')) resolve(false);
          else {
            io.stderr.write(`Unable to listen on port ${pair.local}: ${err.message}\n`);
            resolve(false);
          }
        });
        server.listen(pair.local, addr, () => resolve(true));
      });
      if (!ok) {
        if (addr === '::1') continue;
        for (const s of servers) s.close();
        io.stderr.write(`error: unable to listen on any of the requested ports: [{${pair.local} ${pair.remote}}]\n`);
        return 1;
      }
      // A free port (`:80`) is the one the first listener got, for every address.
      const port = (server.address() as { port: number }).port;
      if (pair.local === 0) pair.local = port;
      servers.push(server);
      io.stdout.write(`Forwarding from ${addr.includes(':') ? `[${addr}]` : addr}:${port} -> ${pair.remote}\n`);
    }
  }
  await new Promise<void>((resolve) => {
    if (io.signal?.aborted) return resolve();
    io.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  for (const s of servers) s.close();
  for (const c of open) c.destroy();
  return 0;
}
