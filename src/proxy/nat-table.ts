// Keeps the kernel's nat table in step with the service proxy (its iptables mode, opt-in, as
// root): a chain of DNAT rules (nat-rules.ts) jumped to from OUTPUT, so connections the host
// makes to a ClusterIP go straight to a Ready endpoint without passing through the agent. Writes are
// one at a time, the latest wins; stop (and the agent's exit) remove the jump and the chain.

import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from '../util/logger.js';
import { natRestoreInput, type NatServicePort } from './nat-rules.js';

const run = promisify(execFile);

/** The chain kube-proxy calls KUBE-SERVICES. */
export const defaultNatChain = 'PODVISOR-SERVICES';

export class NatTable {
  private wanted: readonly NatServicePort[] | undefined;
  private writing: Promise<void> | undefined;
  private started = false;
  private stopped = false;
  private readonly onExit = () => this.removeSync();

  constructor(
    private readonly logger: Logger,
    readonly chain = defaultNatChain,
  ) {}

  /** Creates the (empty) chain and its jump from OUTPUT; throws when iptables cannot. */
  async start(): Promise<void> {
    await this.restore(natRestoreInput(this.chain, []));
    const present = await run('iptables', ['-w', '-t', 'nat', '-C', 'OUTPUT', '-j', this.chain]).then(
      () => true,
      () => false,
    );
    if (!present) await run('iptables', ['-w', '-t', 'nat', '-I', 'OUTPUT', '1', '-j', this.chain]);
    if (this.stopped) {
      this.removeSync();
      return;
    }
    this.started = true;
    process.once('exit', this.onExit);
    if (this.wanted) await this.set(this.wanted);
  }

  /** Replaces the rules with those of `ports` (soon: a write in progress finishes first). */
  set(ports: readonly NatServicePort[]): Promise<void> {
    this.wanted = ports;
    if (!this.started) return Promise.resolve();
    this.writing ??= this.flush();
    return this.writing;
  }

  /** Settles once what was last set is in the kernel. */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Removes the jump and the chain. */
  stop(): void {
    this.stopped = true;
    if (!this.started) return;
    this.started = false;
    process.off('exit', this.onExit);
    this.removeSync();
  }

  /** Writes what was last set until nothing newer is left; ends (clearing `writing`) in the same turn as its last check. */
  private async flush(): Promise<void> {
    await Promise.resolve();
    while (this.wanted && this.started) {
      const ports = this.wanted;
      this.wanted = undefined;
      try {
        await this.restore(natRestoreInput(this.chain, ports));
      } catch (err) {
        this.logger.warn('The service proxy cannot write its nat rules', { chain: this.chain, err: (err as Error).message });
      }
    }
    this.writing = undefined;
  }

  private restore(input: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = execFile('iptables-restore', ['-w', '--noflush'], (err) => (err ? reject(err) : resolve()));
      child.stdin?.end(input);
    });
  }

  private removeSync(): void {
    for (const args of [
      ['-w', '-t', 'nat', '-D', 'OUTPUT', '-j', this.chain],
      ['-w', '-t', 'nat', '-F', this.chain],
      ['-w', '-t', 'nat', '-X', this.chain],
    ])
      try {
        execFileSync('iptables', args, { stdio: 'ignore' });
      } catch {
        // already gone
      }
  }
}
