// Sidecar termination ordering (§11.6, kuberuntime_termination_order.go): regular containers stop at
// once; each sidecar waits until every regular container and the sidecar defined after it exited.

import type { Pod } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import { isSidecar } from './format.js';

class Gate {
  closed = false;
  private waiters: Array<() => void> = [];
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiters.splice(0)) w();
  }
  wait(): Promise<void> {
    return this.closed ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
}

export class TerminationOrdering {
  private readonly terminated = new Map<string, Gate>();
  private readonly prereqs = new Map<string, Gate[]>();

  /** runningNames: the containers still running; the others count as already exited. */
  constructor(
    pod: Pod,
    runningNames: Iterable<string>,
    private readonly clock: Clock,
  ) {
    const running = new Set(runningNames);
    const gateFor = (name: string): Gate => {
      const g = new Gate();
      if (!running.has(name)) g.close();
      this.terminated.set(name, g);
      return g;
    };
    const mainGates = (pod.spec?.containers ?? []).map((c) => gateFor(c.name));
    const inits = pod.spec?.initContainers ?? [];
    let laterSidecar: string | undefined;
    for (let i = inits.length - 1; i >= 0; i--) {
      const ic = inits[i]!;
      gateFor(ic.name);
      if (!isSidecar(ic)) continue;
      const waits = [...mainGates];
      if (laterSidecar !== undefined) waits.push(this.terminated.get(laterSidecar)!);
      this.prereqs.set(ic.name, waits);
      laterSidecar = ic.name;
    }
  }

  /**
   * Waits until name's prerequisites exited, at most graceSeconds (or until cancelled); returns the
   * seconds waited (fractional, the caller truncates).
   */
  async waitForTurn(name: string, graceSeconds: number, cancelled?: Promise<void>): Promise<number> {
    if (graceSeconds <= 0) return 0;
    const start = this.clock.now();
    const gates = this.prereqs.get(name) ?? [];
    if (gates.every((g) => g.closed)) return 0;
    let timer: { cancel(): void } | undefined;
    const expired = new Promise<void>((r) => {
      timer = this.clock.setTimer(graceSeconds * 1000, r);
    });
    try {
      await Promise.race([Promise.all(gates.map((g) => g.wait())), expired, ...(cancelled ? [cancelled] : [])]);
    } finally {
      timer?.cancel();
    }
    return (this.clock.now() - start) / 1000;
  }

  containerTerminated(name: string): void {
    this.terminated.get(name)?.close();
  }
}
