// The kubelet's generic PLEG for runtimes that push no container events (containerd 1.6 has no
// GetContainerEvents): every relist period the runtime's containers are listed, and each sandbox
// whose containers changed state, appeared or went away is reported once. While the runtime's event
// stream is connected, relisting is only the safety net of the kubelet's evented PLEG: once per
// evented period, and at once after the stream (re)connects, for the changes of the gap.

import type { ContainerState, RuntimeService } from '../runtime/cri.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

/** The kubelet's relistPeriod. */
export const RELIST_PERIOD_MS = 1000;
/** The kubelet's eventedPlegRelistPeriod: the relist's period while container events are pushed. */
export const EVENTED_RELIST_PERIOD_MS = 300_000;

export class Relister {
  private previous = new Map<string, { sandbox: string; state: ContainerState }>();
  private timer?: Timer;
  private stopped = false;
  /** The event stream connection of the last relist (undefined: not connected), and its time. */
  private lastConnection: number | undefined;
  private lastRelistAt = -Infinity;

  constructor(
    private readonly runtime: RuntimeService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onChange: (podSandboxId: string) => void,
    private readonly periodMs = RELIST_PERIOD_MS,
    private readonly eventedPeriodMs = EVENTED_RELIST_PERIOD_MS,
  ) {}

  /** Whether this tick relists: always without a connected event stream, else per the evented period. */
  private due(): boolean {
    const connection = this.runtime.containerEventsConnection();
    if (connection === undefined || connection !== this.lastConnection) return true;
    return this.clock.now() - this.lastRelistAt >= this.eventedPeriodMs;
  }

  start(): void {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** One relist: the sandboxes whose containers changed since the previous one. */
  async relist(): Promise<Set<string>> {
    const current = new Map<string, { sandbox: string; state: ContainerState }>();
    // Only states are compared: one ListContainers, no per-container status (the changed pods' syncs ask for those).
    const listed = await this.runtime.listContainerStates();
    for (const c of listed) current.set(c.id, { sandbox: c.podSandboxId, state: c.state });
    const changed = new Set<string>();
    for (const [id, c] of current) if (this.previous.get(id)?.state !== c.state) changed.add(c.sandbox);
    for (const [id, c] of this.previous) if (!current.has(id)) changed.add(c.sandbox);
    this.previous = current;
    return changed;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(this.periodMs, () => {
      if (!this.due()) return this.schedule();
      // Read before listing: a stream that drops meanwhile shows as a new connection next tick.
      const connection = this.runtime.containerEventsConnection();
      this.relist()
        .then((changed) => {
          this.lastConnection = connection;
          this.lastRelistAt = this.clock.now();
          return changed;
        })
        .then((changed) => {
          if (!this.stopped) for (const s of changed) this.onChange(s);
        })
        .catch((e) => this.logger.warn('Relisting containers failed', { err: e instanceof Error ? e.message : String(e) }))
        .finally(() => this.schedule());
    });
  }
}
