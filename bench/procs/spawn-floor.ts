// The exec-probe floor: child_process.spawn of the same command at the same rate, output collected
// as a probe collects it, and nothing else, to show what a bare exec costs the spawning process.

import { spawn } from 'node:child_process';
import { serve } from '../lib/child-server.js';
import { runSlots, type Slots } from '../lib/slots.js';
import { MeasureWindow } from '../lib/window.js';

export interface SpawnFloorParams {
  /** Commands spawned once per period each. */
  count: number;
  periodMs: number;
  command: string[];
}

const OUTPUT_LIMIT = 10 * 1024;
const PRIME_EXECS = 5;
// The program's state lives in main(), one instance per process.
async function main(): Promise<void> {
  const window = new MeasureWindow();
  let slots: Slots | undefined;

  function exec(command: string[], done?: () => void): void {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let size = 0;
    const keep = (chunk: Buffer) => {
      size += chunk.length;
      if (size > OUTPUT_LIMIT) size = OUTPUT_LIMIT;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', () => window.count('errors'));
    child.on('close', (code) => {
      window.count(code === 0 ? 'ok' : 'failed');
      done?.();
    });
  }

  /** A few execs one after another before measuring, so the first measured ones do not pay for loading code. */
  async function prime(command: string[]): Promise<void> {
    for (let i = 0; i < PRIME_EXECS; i++) await new Promise<void>((resolve) => exec(command, resolve));
  }

  serve(
    {
      start: async (p: SpawnFloorParams) => {
        await prime(p.command);
        window.begin();
        slots = runSlots(
          p.count,
          p.periodMs,
          () => exec(p.command),
          (ms) => window.late(ms),
        );
        return null;
      },
      begin: () => window.begin(),
      read: () => window.read(),
      stop: () => {
        slots?.stop();
        return window.read();
      },
    },
    async () => slots?.stop(),
  );
}

await main();
