// The process-manager floor: one Node process that spawns the same commands, starts each again the
// moment it exits (what pm2 and the kubelet's restartPolicy Always do, with nothing else around it),
// and stops them all on request — the least a supervisor of N processes can cost.

import { spawn, type ChildProcess } from 'node:child_process';
import { serve } from '../lib/child-server.js';
import { preciseNow } from '../lib/stats.js';

export interface RestartFloorParams {
  /** Each entry one supervised process: its argv. */
  commands: string[][];
}

export interface RestartFloorStart {
  /** ms from the start call until every process had spawned. */
  allSpawnedMs: number;
}

// The program's state lives in main(), one instance per process.
async function main(): Promise<void> {
  const children = new Set<ChildProcess>();
  let supervising = false;

  function supervise(command: string[], onSpawn?: () => void): void {
    const child = spawn(command[0]!, command.slice(1), { stdio: 'ignore' });
    children.add(child);
    if (onSpawn) child.once('spawn', onSpawn);
    child.once('exit', () => {
      children.delete(child);
      if (supervising) supervise(command);
    });
  }

  async function start(p: RestartFloorParams): Promise<RestartFloorStart> {
    supervising = true;
    const t0 = preciseNow();
    await Promise.all(p.commands.map((c) => new Promise<void>((resolve) => supervise(c, resolve))));
    return { allSpawnedMs: preciseNow() - t0 };
  }

  /** Stops every process (SIGTERM) without restarting it; resolves to ms until all have exited. */
  async function teardown(): Promise<number> {
    supervising = false;
    const t0 = preciseNow();
    const exits = [...children].map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once('exit', r))));
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(exits);
    return preciseNow() - t0;
  }

  serve({ start, teardown, stop: teardown }, async () => void (await teardown()));
}

await main();
