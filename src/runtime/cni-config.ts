// The pod network podvisor sets up for a CRI runtime: one CNI bridge on a private range with
// host-local addresses and portmap for hostPort, written as a conflist into the runtime's CNI
// configuration directory (containerd watches it and uses the first file in name order).

import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';

/**
 * The private range the default pod networks come from, which clashes with no common default (Docker
 * 172.17.0.0/16 and up, podman 10.88.0.0/16, flannel 10.244.0.0/16): each root dir gets a /24 of it.
 */
export const POD_CIDR_POOL = '10.85.0.0/16';
export const DEFAULT_BRIDGE = 'podvisor0';
/** Linux's IFNAMSIZ less the terminating NUL. */
const MAX_INTERFACE_NAME = 15;
export const CONF_FILE = '10-podvisor.conflist';

export interface PodNetworkOptions {
  /** IPv4 CIDR the pods' addresses come from. */
  podCIDR: string;
  bridge?: string;
  /** Masquerade traffic leaving the pod range (default true, so pods reach beyond the host). */
  ipMasq?: boolean;
  /** Where host-local keeps its allocations (its default /var/lib/cni/networks when unset). */
  ipamDataDir?: string;
}

/**
 * The bridge of the agent whose state is under rootDir: `podvisor` and 7 hex digits of the root
 * dir's hash. Two agents on one host (each with its own root dir, node name and pod range) then
 * never share a bridge, whose gateway address would belong to the other's range.
 */
export function bridgeName(rootDir: string): string {
  const digest = createHash('sha256').update(resolve(rootDir)).digest('hex');
  return `podvisor${digest}`.slice(0, MAX_INTERFACE_NAME);
}

/**
 * The default pod range of the agent whose state is under rootDir: the /24 of 10.85.0.0/16 its root
 * dir's hash picks (the same hash as its bridge), so that two agents on one host route their pods
 * through their own bridges. 254 addresses, more than the kubelet's default maxPods (110).
 */
export function defaultPodCIDR(rootDir: string): string {
  const digest = createHash('sha256').update(resolve(rootDir)).digest();
  return `10.85.${digest[0]}.0/24`;
}

/** The first and last address of an IPv4 CIDR (checked by checkPodCIDR) as unsigned integers. */
export function cidrRange(cidr: string): { first: number; last: number } {
  const [addr, bits] = cidr.split('/');
  const ip = addr!.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(bits));
  const first = ip - (ip % size);
  return { first, last: first + size - 1 };
}

/** Whether two IPv4 CIDRs share an address. */
export function cidrsOverlap(a: string, b: string): boolean {
  const x = cidrRange(a);
  const y = cidrRange(b);
  return x.first <= y.last && y.first <= x.last;
}

/** Checks an IPv4 CIDR (`a.b.c.d/n`, n in 8..30); returns an error message or undefined. */
export function checkPodCIDR(cidr: string): string | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255)) return `invalid CIDR address: ${cidr}`;
  const bits = Number(m[5]);
  if (bits < 8 || bits > 30) return `prefix length must be between 8 and 30: ${cidr}`;
  return undefined;
}

export function podNetworkConfList(opts: PodNetworkOptions): object {
  const ipam: Record<string, unknown> = { type: 'host-local', ranges: [[{ subnet: opts.podCIDR }]], routes: [{ dst: '0.0.0.0/0' }] };
  if (opts.ipamDataDir) ipam.dataDir = opts.ipamDataDir;
  return {
    cniVersion: '0.4.0',
    name: 'podvisor',
    plugins: [
      { type: 'bridge', bridge: opts.bridge ?? DEFAULT_BRIDGE, isGateway: true, ipMasq: opts.ipMasq ?? true, hairpinMode: true, ipam },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}

/**
 * Writes the conflist into dir (atomically) unless the same content is there. Returns the names of
 * other network configs that sort before it (the runtime would use those instead).
 */
export async function writePodNetworkConfig(dir: string, opts: PodNetworkOptions): Promise<string[]> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const text = `${JSON.stringify(podNetworkConfList(opts), null, 2)}\n`;
  const path = join(dir, CONF_FILE);
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current !== text) {
    await writeFile(`${path}.tmp`, text, { mode: 0o644 });
    await rename(`${path}.tmp`, path);
  }
  const names = await readdir(dir);
  return names.filter((n) => /\.(conf|conflist|json)$/.test(n) && n < CONF_FILE).sort();
}
