// Keeps the kernel's filter table in step with the NetworkPolicies (network-policy-rules.ts): the
// agent's chain, jumped to first from FORWARD (traffic between pods on the bridge, with
// bridge-nf-call-iptables, and routed to and from them), rewritten whole and atomically with
// iptables-restore at each change; writes one at a time, the latest wins; stop (and the agent's exit)
// remove the jump and every chain written.

import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from '../util/logger.js';
import { filterChains, filterRestoreInput, type PodFilter } from './network-policy-rules.js';

const run = promisify(execFile);

export class NetworkPolicyTable {
  private wanted: readonly PodFilter[] | undefined;
  private written: string[] = [];
  private lastInput = '';
  private writing: Promise<void> | undefined;
  private started = false;
  private stopped = false;
  private readonly onExit = () => this.removeSync();

  constructor(
    private readonly logger: Logger,
    readonly chain: string,
  ) {}

  /** Creates the (empty) chain and its jump from FORWARD; throws when iptables cannot. */
  async start(): Promise<void> {
    // Chains of this agent's chain left by an earlier run that ended without its stop go with the first write.
    const left = await run('iptables', ['-w', '-t', 'filter', '-S']).then(
      ({ stdout }) => [...stdout.matchAll(/^-N (\S+)$/gm)].map((m) => m[1]!).filter((c) => c.startsWith(`${this.chain}-`)),
      () => [],
    );
    await this.restore(filterRestoreInput(this.chain, [], left));
    this.written = [this.chain];
    const present = await run('iptables', ['-w', '-t', 'filter', '-C', 'FORWARD', '-j', this.chain]).then(
      () => true,
      () => false,
    );
    if (!present) await run('iptables', ['-w', '-t', 'filter', '-I', 'FORWARD', '1', '-j', this.chain]);
    if (this.stopped) {
      this.removeSync();
      return;
    }
    this.started = true;
    process.once('exit', this.onExit);
    if (this.wanted) await this.set(this.wanted);
  }

  /** Replaces the filters (soon: a write in progress finishes first). */
  set(filters: readonly PodFilter[]): Promise<void> {
    this.wanted = filters;
    if (!this.started) return Promise.resolve();
    this.writing ??= this.flush();
    return this.writing;
  }

  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  stop(): void {
    this.stopped = true;
    if (!this.started) return;
    this.started = false;
    process.off('exit', this.onExit);
    this.removeSync();
  }

  private async flush(): Promise<void> {
    await Promise.resolve();
    while (this.wanted && this.started) {
      const filters = this.wanted;
      this.wanted = undefined;
      const input = filterRestoreInput(this.chain, filters, this.written);
      if (input === this.lastInput) continue;
      try {
        await this.restore(input);
        this.written = filterChains(this.chain, filters);
        this.lastInput = input;
      } catch (err) {
        this.logger.warn('The network policies cannot be written to the filter table', { chain: this.chain, err: (err as Error).message });
      }
    }
    this.writing = undefined;
  }

  private restore(input: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = execFile('iptables-restore', ['-w', '--noflush'], (err, _out, stderr) =>
        err ? reject(new Error(stderr.trim() || err.message)) : resolve(),
      );
      child.stdin?.end(input);
    });
  }

  private removeSync(): void {
    const commands = [['-D', 'FORWARD', '-j', this.chain], ...this.written.map((c) => ['-F', c]), ...this.written.map((c) => ['-X', c])];
    for (const args of commands)
      try {
        execFileSync('iptables', ['-w', '-t', 'filter', ...args], { stdio: 'ignore' });
      } catch {
        // already gone
      }
  }
}
