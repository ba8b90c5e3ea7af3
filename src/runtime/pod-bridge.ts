// The pod bridges on the host as the CNI bridge plugin leaves them (it creates a bridge at the first
// sandbox and never removes it): each podvisor bridge with its IPv4 networks and its ports (one veth
// per pod sandbox), read from `ip -j addr` and /sys/class/net; and the removal of one.

import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The prefix of every bridge podvisor names (cni-config.ts bridgeName). */
export const BRIDGE_PREFIX = 'podvisor';

export interface HostBridge {
  name: string;
  /** Its IPv4 networks as CIDRs (`10.85.3.0/24` for the gateway 10.85.3.1/24). */
  networks: string[];
  /** The interfaces enslaved to it: the host ends of the pods' veths. */
  ports: string[];
}

interface IpAddrEntry {
  ifname: string;
  addr_info?: Array<{ family?: string; local?: string; prefixlen?: number }>;
}

function networkOf(local: string, prefixlen: number): string {
  const ip = local.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const size = 2 ** (32 - prefixlen);
  const first = ip - (ip % size);
  const octets = [24, 16, 8, 0].map((shift) => Math.floor(first / 2 ** shift) % 256);
  return `${octets.join('.')}/${prefixlen}`;
}

/** The bridges whose name starts with `podvisor`, with their networks and ports. */
export async function listPodBridges(sysClassNet = '/sys/class/net'): Promise<HostBridge[]> {
  const names = (await readdir(sysClassNet)).filter((n) => n.startsWith(BRIDGE_PREFIX));
  if (names.length === 0) return [];
  const { stdout } = await run('ip', ['-j', '-4', 'addr', 'show']);
  const entries = JSON.parse(stdout || '[]') as IpAddrEntry[];
  const bridges: HostBridge[] = [];
  for (const name of names) {
    const ports = await readdir(join(sysClassNet, name, 'brif')).catch(() => undefined);
    if (!ports) continue; // not a bridge
    const entry = entries.find((e) => e.ifname === name);
    const networks = (entry?.addr_info ?? [])
      .filter((a) => a.family === 'inet' && a.local && a.prefixlen !== undefined)
      .map((a) => networkOf(a.local!, a.prefixlen!));
    bridges.push({ name, networks, ports });
  }
  return bridges;
}

/** Deletes a bridge (its address and the route to its network go with it). */
export async function deleteBridge(name: string): Promise<void> {
  await run('ip', ['link', 'delete', name, 'type', 'bridge']);
}
