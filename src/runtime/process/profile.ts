// What the process runtime is, as it announces itself to its CRI clients (Version and the verbose
// Status info): its name, version and capabilities. Light, for what validates before connecting.

import type { RuntimeCapabilities } from '../cri.js';
import { mountNamespaceProblem } from './mount-namespace.js';

export const PROCESS_RUNTIME_NAME = 'process';
export const PROCESS_RUNTIME_VERSION = '0.1.0';

/**
 * No images (a command names a host binary), volumes through a mount namespace per container where
 * this host can make one (mount-namespace.ts), host processes on the host's network, Exec and an
 * output-only Attach through its streaming server, no PortForward.
 */
export const PROCESS_RUNTIME_CAPABILITIES: RuntimeCapabilities = Object.freeze({
  images: false,
  mounts: mountNamespaceProblem() === undefined,
  hostProcesses: true,
  network: 'host',
  stdin: false,
  streaming: Object.freeze({ exec: true, attach: true, portForward: false }),
});

/** The same with a network namespace per pod (`--pod-network=cni`): pods have IPs of their own. */
export function withPodNetwork(c: RuntimeCapabilities): RuntimeCapabilities {
  return Object.freeze({ ...c, network: 'pod' });
}
