// `--runtime=containerd` with `--cni-conf-dir`: writes podvisor's pod network into the runtime's CNI
// directory before connecting (its bridge and, by default, its /24 named after the root dir), and
// warns when another network there would be used first. `--runtime=process --pod-network=cni`: the
// same bridge and range, which the runtime service attaches its pods to, once the host is checked
// (root, the CNI plugins). Bridges outlive the plugin's sandboxes, so the agent removes its own when
// it stops with no pod on it, and at start clears bridges without pods whose range would shadow its
// own (a bridge left by an agent that is gone).

import { bridgeName, checkPodCIDR, cidrsOverlap, defaultPodCIDR, writePodNetworkConfig } from '../runtime/cni-config.js';
import { deleteBridge, listPodBridges } from '../runtime/pod-bridge.js';
import { DEFAULT_CNI_BIN_DIR, podNetworkConfig, podNetworkHostProblems } from '../runtime/process-runtime.js';
import type { Logger } from '../util/logger.js';
import type { AgentSettings } from './settings.js';

type NetworkSettings = Pick<AgentSettings, 'cniConfDir' | 'podCIDR' | 'rootDir' | 'podNetwork'>;

/** Whether the agent's pods are on its CNI bridge (containerd with --cni-conf-dir, or --pod-network=cni). */
export function hasPodBridge(settings: NetworkSettings): boolean {
  return Boolean(settings.cniConfDir || settings.podNetwork === 'cni');
}

/**
 * `--pod-network=cni`: what the host lacks for it, as one error naming each missing piece (root,
 * the CNI plugins, ip, nsenter) before anything starts; then the stale bridges go as for containerd.
 */
export async function prepareProcessPodNetwork(settings: AgentSettings, logger: Logger): Promise<void> {
  const cidr = podCIDROf(settings);
  const problems = podNetworkHostProblems(podNetworkConfig(settings.rootDir, cidr, DEFAULT_CNI_BIN_DIR));
  if (problems.length) throw new Error(`--pod-network=cni cannot be used here: ${problems.join('; ')}`);
  await clearStaleBridges(bridgeName(settings.rootDir), cidr, logger);
}

/** The pod range of the agent: --pod-cidr, else the root dir's own /24. */
export function podCIDROf(settings: NetworkSettings): string {
  return settings.podCIDR ?? defaultPodCIDR(settings.rootDir);
}

export async function preparePodNetwork(settings: AgentSettings, logger: Logger): Promise<void> {
  if (!settings.cniConfDir) return;
  const cidr = podCIDROf(settings);
  const bad = checkPodCIDR(cidr);
  if (bad) throw new Error(`--pod-cidr: ${bad}`);
  const bridge = bridgeName(settings.rootDir);
  await clearStaleBridges(bridge, cidr, logger);
  // A bridge of this agent's own: another agent on the host (another root dir) has its own.
  const earlier = await writePodNetworkConfig(settings.cniConfDir, { podCIDR: cidr, bridge });
  if (earlier.length) {
    logger.warn(`${settings.cniConfDir} holds ${earlier.join(', ')}, which the runtime uses before podvisor's network`);
  }
}

/**
 * Before the first sandbox: this root dir's bridge with no pod on it goes (the plugin makes it again
 * with the current range), and so does any other podvisor bridge with no pod whose range overlaps
 * ours (its route would take our pods' traffic). An overlapping bridge with pods is another live
 * agent's: an error, as the two could not both reach their pods.
 */
async function clearStaleBridges(own: string, cidr: string, logger: Logger): Promise<void> {
  let bridges;
  try {
    bridges = await listPodBridges();
  } catch (err) {
    logger.warn('Could not list the pod bridges on the host', { err: (err as Error).message });
    return;
  }
  for (const b of bridges) {
    const overlapping = b.networks.find((n) => cidrsOverlap(n, cidr));
    if (b.name !== own && !overlapping) continue;
    if (b.ports.length > 0) {
      if (b.name === own) {
        if (b.networks.length && !b.networks.some((n) => n === cidr)) {
          logger.warn(`Bridge ${own} still serves ${b.ports.length} pod(s) on ${b.networks.join(', ')}; new pods get ${cidr} once they are gone`);
        }
        continue;
      }
      throw new Error(
        `--pod-cidr ${cidr} overlaps ${overlapping} of bridge ${b.name}, which ${b.ports.length} pod(s) of another agent use; give this agent another --pod-cidr`,
      );
    }
    await deleteBridge(b.name).then(
      () => logger.info('Removed a pod bridge with no pod on it', { bridge: b.name, networks: b.networks.join(',') }),
      (err: Error) => logger.warn('Could not remove a stale pod bridge', { bridge: b.name, err: err.message }),
    );
  }
}

/** When the agent stops: its bridge goes if no pod is on it (pods left running keep it). */
export async function releasePodNetwork(settings: NetworkSettings, logger: Logger): Promise<void> {
  if (!hasPodBridge(settings)) return;
  const own = bridgeName(settings.rootDir);
  const bridge = await listPodBridges().then(
    (all) => all.find((b) => b.name === own),
    () => undefined,
  );
  if (!bridge || bridge.ports.length > 0) return;
  await deleteBridge(own).then(
    () => logger.info('Removed the pod bridge, no pod left on it', { bridge: own }),
    (err: Error) => logger.warn('Could not remove the pod bridge', { bridge: own, err: err.message }),
  );
}
