// A network namespace per pod sandbox on the CNI bridge containerd's pods use (cni-config.ts: the
// root dir's bridge and /24, host-local addresses, portmap for hostPort), for the process runtime's
// `--pod-network=cni`: a namespace file as containerd's pkg/netns makes one, then the conflist's plugins called as libcni calls them
// (ADD in order, each given the previous result; DEL in reverse), and the reverse at teardown.

import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bridgeName, checkPodCIDR, podNetworkConfList } from '../cni-config.js';
import type { PortMapping } from '../cri.js';

const run = promisify(execFile);

/** Where Debian's containernetworking-plugins are, and containerd's default bin_dir. */
export const DEFAULT_CNI_BIN_DIR = '/usr/lib/cni';
/** Where named namespaces are (iproute2's and containerd's directory: `ip netns list` shows the pods'). */
export const NETNS_DIR = '/var/run/netns';
/** The plugins the pod network calls. */
const REQUIRED_PLUGINS = ['bridge', 'host-local', 'portmap'];
/** The interface the pod's address is on, as the kubelet's pods have it. */
const POD_INTERFACE = 'eth0';

export interface PodNetworkConfig {
  /** The pod range (cni-config.ts defaultPodCIDR of the root dir unless told). */
  podCIDR: string;
  /** The bridge (cni-config.ts bridgeName of the root dir). */
  bridge: string;
  cniBinDir: string;
}

/** The pod network of a root dir: its own bridge and range, as the containerd path writes them. */
export function podNetworkConfig(rootDir: string, podCIDR: string, cniBinDir = DEFAULT_CNI_BIN_DIR): PodNetworkConfig {
  return { podCIDR, bridge: bridgeName(rootDir), cniBinDir };
}

/** A sandbox's namespace and what CNI gave it. */
export interface PodNetworkAttachment {
  /** The namespace's name under /var/run/netns. */
  netns: string;
  /** The pod's IPv4 address, once attached. */
  ip?: string;
  /** Torn down (CNI DEL, namespace removed); the address stays for the stopped sandbox's status. */
  detached?: boolean;
  /** The network it was attached to, so that it is torn down as it was made even by a runtime started without one. */
  config?: PodNetworkConfig;
}

/**
 * What this host lacks for pod networks, each said plainly (an empty list: nothing): root, the
 * `ip` and `nsenter` commands, the CNI plugins, a valid range.
 */
export function podNetworkHostProblems(config: PodNetworkConfig, uid = process.getuid?.() ?? 0): string[] {
  const problems: string[] = [];
  if (uid !== 0) problems.push(`it needs root (podvisor runs as uid ${uid}): a network namespace per pod is made with ip netns and CNI`);
  const bad = checkPodCIDR(config.podCIDR);
  if (bad) problems.push(`--pod-cidr: ${bad}`);
  const missingPlugins = REQUIRED_PLUGINS.filter((p) => !executable(join(config.cniBinDir, p)));
  if (missingPlugins.length) {
    problems.push(`the CNI plugins ${missingPlugins.join(', ')} are missing from ${config.cniBinDir} (Debian: apt-get install containernetworking-plugins)`);
  }
  for (const [command, pkg] of [
    ['ip', 'iproute2'],
    ['nsenter', 'util-linux'],
    ['unshare', 'util-linux'],
  ] as const) {
    if (!findCommand(command)) problems.push(`the ${command} command is missing (Debian: apt-get install ${pkg})`);
  }
  return problems;
}

/** A netns name for a sandbox id: `podvisor-` and 16 hex digits of it (unique among this host's sandboxes). */
export function netnsName(sandboxId: string): string {
  return `podvisor-${sandboxId.slice(0, 16)}`;
}

export function netnsPath(name: string): string {
  return join(NETNS_DIR, name);
}

/** The argv that runs file/args inside the namespace, as uid/gid when given (nsenter sets them after setns). */
export function nsenterArgv(
  netns: string,
  target: { file: string; args: string[]; uid?: number; gid?: number },
  nsenter: string,
): { file: string; args: string[] } {
  const ids = target.uid !== undefined || target.gid !== undefined ? [`--setuid=${target.uid ?? 0}`, `--setgid=${target.gid ?? 0}`] : [];
  return { file: nsenter, args: [`--net=${netnsPath(netns)}`, ...ids, '--', target.file, ...target.args] };
}

/** Where nsenter is (the runtime's pod network needs it: podNetworkHostProblems). */
export function findNsenter(): string {
  return findCommand('nsenter') ?? '/usr/bin/nsenter';
}

interface CniResult {
  ips?: Array<{ address?: string; version?: string }>;
  [k: string]: unknown;
}

/**
 * Creates the sandbox's namespace with its loopback up and attaches it to the bridge; on a failure,
 * whatever was made is undone and the error says which plugin failed, as containerd's does.
 */
export async function attachPodNetwork(config: PodNetworkConfig, sandboxId: string, portMappings: PortMapping[]): Promise<PodNetworkAttachment> {
  const netns = netnsName(sandboxId);
  await createNetns(netns);
  try {
    // The loopback and the plugins (which touch eth0 only) are independent: side by side.
    const [, result] = await Promise.all([run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']), cniAdd(config, sandboxId, netns, portMappings)]);
    const ip = (result.ips ?? []).map((i) => i.address?.split('/')[0]).find((a) => a && !a.includes(':'));
    if (!ip) throw new Error(`the CNI plugins gave no IPv4 address: ${JSON.stringify(result)}`);
    return { netns, ip, config };
  } catch (err) {
    await detachPodNetwork(config, sandboxId, { netns }, portMappings).catch(() => undefined);
    throw err;
  }
}

/**
 * A new network namespace kept by a bind mount on NETNS_DIR/name, as containerd's pkg/netns keeps
 * its pods' (`unshare --net=FILE` binds it). Not `ip netns add`: that also bind-mounts the directory
 * over itself, which hides the namespaces containerd has already mounted there, so containerd can
 * no longer remove them ("device or resource busy") and its pods never finish deleting.
 */
async function createNetns(name: string): Promise<void> {
  mkdirSync(NETNS_DIR, { recursive: true, mode: 0o755 });
  writeFileSync(netnsPath(name), '', { flag: 'wx', mode: 0o444 });
  try {
    await run('unshare', [`--net=${netnsPath(name)}`, 'true']);
  } catch (err) {
    rmSync(netnsPath(name), { force: true });
    throw err;
  }
}

/** CNI DEL (which releases the address and the veth) and the namespace's removal; both may run again. */
export async function detachPodNetwork(
  config: PodNetworkConfig,
  sandboxId: string,
  attachment: PodNetworkAttachment,
  portMappings: PortMapping[],
): Promise<void> {
  const plugins = pluginConfigs(config, portMappings).reverse();
  let firstError: Error | undefined;
  for (const plugin of plugins) {
    await callPlugin(config, 'DEL', sandboxId, attachment.netns, plugin).catch((err: Error) => (firstError ??= err));
  }
  await run('ip', ['netns', 'delete', attachment.netns]).catch((err: Error & { stderr?: string }) => {
    if (!/No such file|Invalid argument/.test(err.stderr ?? '')) firstError ??= err;
  });
  if (firstError) throw firstError;
}

/** The conflist's plugins as each is called: the list's name and version, portmap only with host ports. */
function pluginConfigs(config: PodNetworkConfig, portMappings: PortMapping[]): Array<Record<string, unknown>> {
  const list = podNetworkConfList({ podCIDR: config.podCIDR, bridge: config.bridge }) as {
    cniVersion: string;
    name: string;
    plugins: Array<Record<string, unknown>>;
  };
  const hostPorts = portMappings
    .filter((p) => p.hostPort > 0)
    .map((p) => ({ hostPort: p.hostPort, containerPort: p.containerPort, protocol: p.protocol.toLowerCase(), hostIP: p.hostIp }));
  const out: Array<Record<string, unknown>> = [];
  for (const plugin of list.plugins) {
    const { capabilities: _capabilities, ...fields } = plugin;
    const base = { cniVersion: list.cniVersion, name: list.name, ...fields };
    if (plugin.type !== 'portmap') out.push(base);
    // As libcni: a capability's runtime config goes only to the plugins that declare it.
    else if (hostPorts.length > 0) out.push({ ...base, runtimeConfig: { portMappings: hostPorts } });
  }
  return out;
}

async function cniAdd(config: PodNetworkConfig, sandboxId: string, netns: string, portMappings: PortMapping[]): Promise<CniResult> {
  let prevResult: CniResult | undefined;
  for (const plugin of pluginConfigs(config, portMappings)) {
    prevResult = await callPlugin(config, 'ADD', sandboxId, netns, prevResult ? { ...plugin, prevResult } : plugin);
  }
  return prevResult ?? {};
}

/** One plugin call (the CNI protocol: parameters in the environment, config on stdin, result or error on stdout). */
function callPlugin(config: PodNetworkConfig, command: 'ADD' | 'DEL', sandboxId: string, netns: string, plugin: Record<string, unknown>): Promise<CniResult> {
  const type = String(plugin.type);
  const env = {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    CNI_COMMAND: command,
    CNI_CONTAINERID: sandboxId,
    CNI_NETNS: netnsPath(netns),
    CNI_IFNAME: POD_INTERFACE,
    CNI_PATH: config.cniBinDir,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(join(config.cniBinDir, type), [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.once('error', (e) => reject(new Error(`plugin type="${type}" failed (${command.toLowerCase()}): ${e.message}`)));
    child.once('close', (code) => {
      const stdout = Buffer.concat(out).toString('utf8').trim();
      if (code === 0) {
        try {
          resolve(stdout ? (JSON.parse(stdout) as CniResult) : {});
        } catch {
          resolve({});
        }
        return;
      }
      let msg = Buffer.concat(err).toString('utf8').trim() || `exit code ${String(code)}`;
      try {
        const e = JSON.parse(stdout) as { msg?: string; details?: string };
        if (e.msg) msg = e.details ? `${e.msg}: ${e.details}` : e.msg;
      } catch {
        // not a CNI error object
      }
      reject(new Error(`plugin type="${type}" failed (${command.toLowerCase()}): ${msg}`));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(plugin));
  });
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findCommand(name: string): string | undefined {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/sbin', '/bin']);
  return dirs.map((d) => join(d || '.', name)).find(executable);
}
