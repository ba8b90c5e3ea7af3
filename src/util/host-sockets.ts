// Which process of the host holds a port, as `ss -ltnup` (iproute2) answers it: the sockets of the
// network namespace from /proc/net/{tcp,tcp6,udp,udp6}, listening TCP sockets and bound UDP ones,
// and their holder found by the socket's inode among the processes' descriptors (/proc/<pid>/fd).
// Read synchronously, so an allocation can skip a port another process holds in the same step that
// picks it; the holder is looked up only when asked for (it reads every process's descriptors).

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** A socket bound to a port: its local address (IPv4 dotted, `::` for the IPv6 wildcard, `v6` for another IPv6 address) and inode. */
export interface BoundSocket {
  protocol: 'TCP' | 'UDP';
  address: string;
  port: number;
  inode: string;
}

/** The process that holds a socket: its pid and command line (as `ps` shows it). */
export interface SocketHolder {
  pid: number;
  command: string;
}

const TCP_LISTEN = '0A';

/** `0100007F` (little-endian, as /proc/net/tcp writes it) as 127.0.0.1. */
function ipv4Of(hex: string): string {
  const n = parseInt(hex, 16);
  return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24].join('.');
}

/** An IPv6 address of /proc/net/tcp6: the wildcard, an IPv4-mapped address (its IPv4 form), or another. */
function ipv6Of(hex: string): string {
  if (/^0+$/.test(hex)) return '::';
  if (hex.slice(0, 16) === '0000000000000000' && hex.slice(16, 24).toUpperCase() === '0000FFFF') return ipv4Of(hex.slice(24));
  return 'v6';
}

function readTable(procRoot: string, file: string, protocol: 'TCP' | 'UDP', v6: boolean): BoundSocket[] {
  let text: string;
  try {
    text = readFileSync(`${procRoot}/net/${file}`, 'utf8');
  } catch {
    return [];
  }
  const out: BoundSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [addr, port] = f[1]!.split(':');
    if (protocol === 'TCP' && f[3] !== TCP_LISTEN) continue;
    out.push({ protocol, address: v6 ? ipv6Of(addr!) : ipv4Of(addr!), port: parseInt(port!, 16), inode: f[9]! });
  }
  return out;
}

/** The listening TCP and bound UDP sockets of this network namespace. */
export function boundSockets(procRoot = '/proc'): BoundSocket[] {
  return [
    ...readTable(procRoot, 'tcp', 'TCP', false),
    ...readTable(procRoot, 'tcp6', 'TCP', true),
    ...readTable(procRoot, 'udp', 'UDP', false),
    ...readTable(procRoot, 'udp6', 'UDP', true),
  ];
}

const wildcard = (a: string) => a === '0.0.0.0' || a === '::';

/** Whether a socket bound to `bound` keeps another from binding `wanted` on the same port (either a wildcard, or the same address). */
export function addressesClash(bound: string, wanted: string): boolean {
  return bound === wanted || wildcard(bound) || wildcard(wanted);
}

/** The socket inodes this process holds itself. */
function ownInodes(procRoot: string): Set<string> {
  const out = new Set<string>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`${procRoot}/self/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`${procRoot}/self/fd/${fd}`));
      if (m) out.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/**
 * The sockets of another process that keep this one from binding `protocol` port on any of
 * `addresses`; empty when the port is free (or held by this process only).
 */
export function heldByOthers(protocol: string, port: number, addresses: readonly string[], procRoot = '/proc'): BoundSocket[] {
  const clash = boundSockets(procRoot).filter((s) => s.protocol === protocol && s.port === port && addresses.some((a) => addressesClash(s.address, a)));
  if (clash.length === 0) return [];
  const own = ownInodes(procRoot);
  return clash.filter((s) => !own.has(s.inode));
}

/** The process holding the socket of `inode`, when it can be seen (another user's descriptors need root). */
export function socketHolder(inode: string, procRoot = '/proc'): SocketHolder | undefined {
  const target = `socket:[${inode}]`;
  let pids: string[] = [];
  try {
    pids = readdirSync(procRoot).filter((p) => /^\d+$/.test(p));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`${procRoot}/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link = '';
      try {
        link = readlinkSync(`${procRoot}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (link === target) return { pid: Number(pid), command: commandOf(procRoot, pid) };
    }
  }
  return undefined;
}

function commandOf(procRoot: string, pid: string): string {
  try {
    const cmd = readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').trim();
    if (cmd) return cmd.length > 160 ? `${cmd.slice(0, 157)}...` : cmd;
  } catch {
    // gone
  }
  try {
    return readFileSync(`${procRoot}/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** `pid 123 ("podvisor agent")`, or undefined when no holder of `sockets` can be seen. */
export function describeHolder(sockets: readonly BoundSocket[], procRoot = '/proc'): string | undefined {
  for (const s of sockets) {
    const h = socketHolder(s.inode, procRoot);
    if (h) return `pid ${h.pid}${h.command ? ` (${JSON.stringify(h.command)})` : ''}`;
  }
  return undefined;
}

/**
 * The ports other processes hold where `addresses` listen, as `PROTO/port` (`TCP/30000`), and who
 * holds one: what an allocator of ports on those addresses skips and names.
 */
export function portsHeldAt(addresses: readonly string[], procRoot = '/proc') {
  const clashing = (s: BoundSocket) => addresses.some((a) => addressesClash(s.address, a));
  return {
    heldByOthers(): ReadonlySet<string> {
      const sockets = boundSockets(procRoot).filter(clashing);
      if (sockets.length === 0) return new Set<string>();
      const own = ownInodes(procRoot);
      return new Set(sockets.filter((s) => !own.has(s.inode)).map((s) => `${s.protocol}/${s.port}`));
    },
    holder(protocol: string, port: number): string | undefined {
      return describeHolder(heldByOthers(protocol, port, addresses, procRoot), procRoot);
    },
  };
}
