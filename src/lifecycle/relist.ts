// The kubelet's generic PLEG for runtimes that push no container events (containerd 1.6 has no
// GetContainerEvents): every relist period the runtime's containers are listed, and each sandbox
// whose containers changed state, appeared or went away is reported once.

import type { ContainerState, RuntimeService } from '../runtime/cri.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

/** The kubelet's relistPeriod. */
export const RELIST_PERIOD_MS = 1000;

export class Relister {
  private previous = new Map<string, { sandbox: string; state: ContainerState }>();
  private timer?: Timer;
  private stopped = false;

  constructor(
    private readonly runtime: RuntimeService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onChange: (podSandboxId: string) => void,
    private readonly periodMs = RELIST_PERIOD_MS,
  ) {}

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
    // The states alone, in one call where the runtime offers it: a full status per container per
    // second would cost the runtime a call per container.
    const listed = this.runtime.listContainerStates ? await this.runtime.listContainerStates() : await this.runtime.listContainers();
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
      this.relist()
        .then((changed) => {
          if (!this.stopped) for (const s of changed) this.onChange(s);
        })
        .catch((e) => this.logger.warn('Relisting containers failed', { err: e instanceof Error ? e.message : String(e) }))
        .finally(() => this.schedule());
    });
  }
}
