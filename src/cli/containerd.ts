// `--runtime=containerd`: connects to containerd's CRI endpoint (a clear error when nothing answers
// there) and writes podvisor's pod network into the CNI directory when asked to.

import { connectCriRuntime } from '../runtime/cri/client.js';
import { checkPodCIDR, DEFAULT_POD_CIDR, writePodNetworkConfig } from '../runtime/cni-config.js';
import type { RuntimeService } from '../runtime/cri.js';
import { streamLogger } from '../util/logger.js';
import type { AgentSettings } from './agent.js';

export async function connectContainerd(settings: AgentSettings, stderr: NodeJS.WritableStream): Promise<RuntimeService> {
  const endpoint = settings.endpoint!;
  if (settings.cniConfDir) {
    const cidr = settings.podCIDR ?? DEFAULT_POD_CIDR;
    const bad = checkPodCIDR(cidr);
    if (bad) throw new Error(`--pod-cidr: ${bad}`);
    const earlier = await writePodNetworkConfig(settings.cniConfDir, { podCIDR: cidr });
    if (earlier.length) {
      stderr.write(`Warning: ${settings.cniConfDir} holds ${earlier.join(', ')}, which the runtime uses before podvisor's network\n`);
    }
  }
  try {
    return await connectCriRuntime({ endpoint, logger: streamLogger(stderr, 'warn') });
  } catch (e) {
    throw new Error(`cannot reach the container runtime at ${endpoint}: ${(e as Error).message}`);
  }
}
