// Keeps the kernel's nat table in step with the service proxy (its iptables mode, opt-in, as
// root): a chain of DNAT rules (nat-rules.ts) jumped to from OUTPUT and PREROUTING, so connections
// the host and pods make to a ClusterIP go straight to a Ready endpoint without passing through the
// agent, and a masquerade chain from POSTROUTING. Writes are one at a time, the latest wins; stop
// (and the agent's exit) remove the jumps and the chains.

import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from '../util/logger.js';
import { natChains, natRestoreInput, type NatServicePort } from './nat-rules.js';

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

  /** Creates the (empty) chains and their jumps from OUTPUT, PREROUTING and POSTROUTING; throws when iptables cannot. */
  async start(): Promise<void> {
    await this.restore(natRestoreInput(this.chain, []));
    for (const [from, to] of this.jumps()) {
      const present = await run('iptables', ['-w', '-t', 'nat', '-C', from, '-j', to]).then(
        () => true,
        () => false,
      );
      if (!present) await run('iptables', ['-w', '-t', 'nat', '-I', from, '1', '-j', to]);
    }
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

  /** Removes the jumps and the chains. */
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

  /** The built-in chains and the chain of ours each jumps to. */
  private jumps(): Array<[string, string]> {
    return [
      ['OUTPUT', this.chain],
      ['PREROUTING', this.chain],
      ['POSTROUTING', `${this.chain}-POST`],
    ];
  }

  private removeSync(): void {
    const commands = [
      ...this.jumps().map(([from, to]) => ['-D', from, '-j', to]),
      ...natChains(this.chain).flatMap((c) => [
        ['-F', c],
        ['-X', c],
      ]),
    ];
    for (const args of commands)
      try {
        execFileSync('iptables', ['-w', '-t', 'nat', ...args], { stdio: 'ignore' });
      } catch {
        // already gone
      }
  }
}
