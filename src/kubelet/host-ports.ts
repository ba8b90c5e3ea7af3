// The host ports the running pods hold, on a runtime whose pods share the host's network: a pod whose
// containerPort another pod already binds waits Pending until that pod ends, as the scheduler's
// NodePorts filter keeps such a pod off a node, instead of crash-looping on EADDRINUSE.

import type { Pod } from '../api/types.js';
import { boundHostPorts, portsConflict, type HostPort } from './admission.js';

/** The waiting reason of a container whose pod waits for a host port. */
export const HostPortInUseReason = 'HostPortInUse';

/** Why a pod cannot take its ports yet: which port, and which pod holds it. */
export interface PortConflict {
  port: HostPort;
  holder: string;
}

export function portConflictMessage(c: PortConflict): string {
  const address = c.port.hostIP === '0.0.0.0' ? '' : `${c.port.hostIP}:`;
  return (
    `port ${address}${c.port.port}/${c.port.protocol} is bound by pod ${c.holder} on this node's network: ` +
    'the pod waits until it is free (pods share the host network on this runtime; give each replica its own port, or use a runtime with pod IPs)'
  );
}

export class HostPortClaims {
  private readonly claims = new Map<string, { pod: string; ports: HostPort[] }>();
  private readonly waiting = new Map<string, () => void>();

  /**
   * Takes the ports of `pod` unless another pod holds one of them. On a conflict, `wake` is kept and
   * called once a holder releases its ports, for the pod to try again.
   */
  claim(pod: Pod, wake: () => void): PortConflict | undefined {
    const uid = pod.metadata?.uid ?? '';
    if (this.claims.has(uid)) return undefined;
    const ports = boundHostPorts(pod, 'host');
    for (const [other, held] of this.claims) {
      if (other === uid) continue;
      for (const want of ports) {
        const port = held.ports.find((h) => portsConflict(h, want));
        if (port) {
          this.waiting.set(uid, wake);
          return { port: want, holder: held.pod };
        }
      }
    }
    this.waiting.delete(uid);
    if (ports.length > 0) this.claims.set(uid, { pod: `${pod.metadata?.namespace || 'default'}/${pod.metadata?.name ?? ''}`, ports });
    return undefined;
  }

  /** The pod stopped for good: its ports are free, and the pods waiting try again. */
  release(podUid: string): void {
    this.waiting.delete(podUid);
    if (!this.claims.delete(podUid)) return;
    for (const wake of [...this.waiting.values()]) wake();
  }
}
