// The service range of a root dir (the API server's --service-cluster-ip-range, and with it the
// cluster DNS address, its tenth address): each root dir has one of its own, so that two agents on
// one host never give out the same ClusterIP or DNS address. Without the flag the range is the one
// recorded in `<root>/service-network.json`, else the first /16 of 127.99.0.0/16, 127.100.0.0/16, …
// 127.254.0.0/16, 127.64.0.0/16, … 127.98.0.0/16 that no other root dir has claimed, and it is
// recorded there (stable across restarts); one whose DNS address another process holds is passed
// over too. Claims are files in a directory shared by the agents of
// the host (`/run/podvisor/service-ranges` as root, else `$XDG_RUNTIME_DIR/podvisor/service-ranges`
// or `<tmpdir>/podvisor-<uid>/service-ranges`), one per range naming its root dir; a claim whose root
// dir no longer records that range is stale and taken over. A range given by the flag that overlaps
// another root dir's is refused, naming it.

import { lstatSync, mkdirSync, readdirSync, readFileSync, linkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { formatIpv4, parseIpv4Range, type Ipv4Range } from '../kubeapi/service-allocator.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/** The record of a root dir's service network. */
export const SERVICE_NETWORK_FILE = 'service-network.json';

export interface ServiceNetworkRecord {
  serviceClusterIPRange: string;
  clusterDNS: string;
}

/** The cluster DNS address of a range: its tenth address (as kubeadm's 10.96.0.10). */
export function dnsAddressOf(range: Ipv4Range): string {
  return formatIpv4(range.base + 10);
}

/** The /16s of 127.0.0.0/8 handed out by default, in order: today's 127.99.0.0/16 first. */
export function candidateRanges(): string[] {
  const seconds = [...Array.from({ length: 254 - 99 + 1 }, (_, i) => 99 + i), ...Array.from({ length: 99 - 64 }, (_, i) => 64 + i)];
  return seconds.map((n) => `127.${n}.0.0/16`);
}

/** Where the agents of this host claim their ranges. */
export function claimsDir(env: NodeJS.ProcessEnv = process.env): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  if (uid === 0) return '/run/podvisor/service-ranges';
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'podvisor', 'service-ranges');
  return join(tmpdir(), `podvisor-${uid}`, 'service-ranges');
}

/** Refused: the range given overlaps the one another root dir records. */
export class ServiceRangeTakenError extends Error {
  constructor(range: string, otherRoot: string, otherRange: string, free: string | undefined) {
    super(
      `the service range ${range} (--service-cluster-ip-range) overlaps ${otherRange}, the service range of root dir ${otherRoot}: ` +
        `their ClusterIPs and cluster DNS addresses would clash; give this agent another${free ? ` (e.g. --service-cluster-ip-range=${free})` : ''}, or leave the flag out to have one chosen`,
    );
    this.name = 'ServiceRangeTakenError';
  }
}

/** True when another process holds address:port for UDP (bound, then let go at once); false when free or not ours to know (EACCES). */
function addressHeld(address: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createSocket('udp4');
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.close();
      done(err.code === 'EADDRINUSE');
    });
    socket.bind({ address, port, exclusive: true }, () => socket.close(() => done(false)));
  });
}

const claimName = (cidr: string) => cidr.replace('/', '_');
const overlaps = (a: Ipv4Range, b: Ipv4Range) => a.base < b.base + b.size && b.base < a.base + a.size;

function readRecord(rootDir: string): ServiceNetworkRecord | undefined {
  try {
    const v = JSON.parse(readFileSync(join(rootDir, SERVICE_NETWORK_FILE), 'utf8')) as Partial<ServiceNetworkRecord>;
    if (typeof v.serviceClusterIPRange !== 'string') return undefined;
    const range = parseIpv4Range(v.serviceClusterIPRange);
    return { serviceClusterIPRange: range.cidr, clusterDNS: dnsAddressOf(range) };
  } catch {
    return undefined;
  }
}

/** The ranges other root dirs hold: claims whose root dir still records that range. */
function otherClaims(dir: string, rootDir: string): Array<{ range: Ipv4Range; root: string }> {
  const out: Array<{ range: Ipv4Range; root: string }> = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const live = liveClaim(dir, name);
    if (live && live.root !== rootDir) out.push(live);
  }
  return out;
}

/** The claim file's range and root dir when that root dir still records the range; undefined when stale. */
function liveClaim(dir: string, name: string): { range: Ipv4Range; root: string } | undefined {
  let root: string;
  let range: Ipv4Range;
  try {
    range = parseIpv4Range(name.replace('_', '/'));
    root = readFileSync(join(dir, name), 'utf8').trim();
  } catch {
    return undefined;
  }
  if (!root.startsWith('/')) return undefined;
  return readRecord(root)?.serviceClusterIPRange === range.cidr ? { range, root } : undefined;
}

/** Creates the claim of cidr for rootDir unless another live one holds it; true when rootDir holds it now. */
function claim(dir: string, cidr: string, rootDir: string): boolean {
  const path = join(dir, claimName(cidr));
  const staged = `${path}.${process.pid}.tmp`;
  writeFileSync(staged, `${rootDir}\n`, { mode: 0o644 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(staged, path);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      let holder: string | undefined;
      try {
        holder = readFileSync(path, 'utf8').trim();
      } catch {
        continue;
      }
      if (holder === rootDir) return true;
      if (liveClaim(dir, claimName(cidr))) return false;
      try {
        unlinkSync(path);
      } catch {
        // another agent took it over first
      }
    }
    return false;
  } finally {
    try {
      unlinkSync(staged);
    } catch {
      // gone
    }
  }
}

/**
 * The service range rootDir uses: the flag's (refused when it overlaps another root dir's), else
 * the recorded one, else the first free candidate; claimed and recorded either way.
 */
export async function serviceRangeFor(rootDir: string, given: string | undefined, dir = claimsDir()): Promise<ServiceNetworkRecord> {
  const root = resolve(rootDir);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  // Claims another user could write would let them steer this agent's range: only our own directory.
  const st = lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
    throw new Error(`${dir}, where the agents of this host claim their service ranges, is not a directory only this user may write: remove it (or make it so)`);
  }
  const others = otherClaims(dir, root);
  const free = () => candidateRanges().find((c) => !others.some((o) => overlaps(o.range, parseIpv4Range(c))));
  const record = async (cidr: string): Promise<ServiceNetworkRecord> => {
    const r = { serviceClusterIPRange: cidr, clusterDNS: dnsAddressOf(parseIpv4Range(cidr)) };
    await writeFileAtomic(join(root, SERVICE_NETWORK_FILE), JSON.stringify(r, null, 2) + '\n', 0o600);
    return r;
  };
  const wanted = given ?? readRecord(root)?.serviceClusterIPRange;
  if (wanted !== undefined) {
    const range = parseIpv4Range(wanted);
    const clash = others.find((o) => overlaps(o.range, range));
    if (clash) throw new ServiceRangeTakenError(range.cidr, clash.root, clash.range.cidr, free());
    const rec = await record(range.cidr);
    claim(dir, range.cidr, root);
    return rec;
  }
  for (const cidr of candidateRanges()) {
    const range = parseIpv4Range(cidr);
    if (others.some((o) => overlaps(o.range, range))) continue;
    // A process that claims nothing (an agent of an older podvisor) may hold its DNS address.
    if (await addressHeld(dnsAddressOf(range), 53)) continue;
    // Recorded first, so that the claim is live the moment it exists.
    const rec = await record(cidr);
    if (claim(dir, cidr, root)) return rec;
  }
  throw new Error('every default service range of 127.0.0.0/8 is claimed by another root dir: give one with --service-cluster-ip-range');
}
