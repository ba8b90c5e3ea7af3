// `--runtime=containerd` with `--cni-conf-dir`: writes podvisor's pod network into the runtime's CNI
// directory before connecting (its bridge named after the root dir), and warns when another network
// there would be used first.

import { bridgeName, checkPodCIDR, DEFAULT_POD_CIDR, writePodNetworkConfig } from '../runtime/cni-config.js';
import type { Logger } from '../util/logger.js';
import type { AgentSettings } from './settings.js';

export async function preparePodNetwork(settings: AgentSettings, logger: Logger): Promise<void> {
  if (!settings.cniConfDir) return;
  const cidr = settings.podCIDR ?? DEFAULT_POD_CIDR;
  const bad = checkPodCIDR(cidr);
  if (bad) throw new Error(`--pod-cidr: ${bad}`);
  // A bridge of this agent's own: another agent on the host (another root dir) has its own.
  const earlier = await writePodNetworkConfig(settings.cniConfDir, { podCIDR: cidr, bridge: bridgeName(settings.rootDir) });
  if (earlier.length) {
    logger.warn(`${settings.cniConfDir} holds ${earlier.join(', ')}, which the runtime uses before podvisor's network`);
  }
}
