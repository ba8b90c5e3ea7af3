// The pod-start and idle floor: raw spawn of the same container processes (and of the trivial
// readiness command once each is up), then holding them idle, with nothing of a pod worker around.

import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve } from '../lib/child-server.js';
import { preciseNow } from '../lib/stats.js';
import { MeasureWindow } from '../lib/window.js';

export interface SleepFloorParams {
  count: number;
  command: string[];
  /** Run once per process after it started; its exit marks the floor's "ready". */
  readyCommand?: string[];
  /** Read and JSON-parse every manifest here first, the raw part of what the agent's loader does. */
  manifestDir?: string;
}

export interface SleepFloorStart {
  /** ms from the start call to each process's spawn event. */
  running: number[];
  /** ms from the start call to each ready command's exit. */
  ready: number[];
  /** ms spent reading and parsing the manifests. */
  readMs: number;
}

// The program's state lives in main(), one instance per process.
async function main(): Promise<void> {
  const window = new MeasureWindow();
  const children = new Set<ChildProcess>();

  function drain(child: ChildProcess): void {
    child.stdout?.resume();
    child.stderr?.resume();
  }

  function run(command: string[], onSpawn: () => void, onExit?: () => void): ChildProcess {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    drain(child);
    child.once('spawn', onSpawn);
    child.once('error', () => window.count('errors'));
    child.once('close', () => {
      children.delete(child);
      onExit?.();
    });
    return child;
  }

  async function readManifests(dir: string): Promise<unknown[]> {
    const names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    return Promise.all(names.map(async (n) => JSON.parse(await readFile(join(dir, n), 'utf8')) as unknown));
  }

  async function start(p: SleepFloorParams): Promise<SleepFloorStart> {
    const t0 = preciseNow();
    if (p.manifestDir) await readManifests(p.manifestDir);
    const readMs = preciseNow() - t0;
    const running: number[] = [];
    const ready: number[] = [];
    await Promise.all(
      Array.from(
        { length: p.count },
        () =>
          new Promise<void>((resolve) => {
            run(p.command, () => {
              running.push(preciseNow() - t0);
              if (!p.readyCommand) return resolve();
              run(
                p.readyCommand,
                () => {},
                () => {
                  ready.push(preciseNow() - t0);
                  resolve();
                },
              );
            });
          }),
      ),
    );
    return { running, ready, readMs };
  }

  async function killAll(): Promise<void> {
    const exits = [...children].map((c) => new Promise((r) => c.once('close', r)));
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(exits);
  }

  serve(
    {
      start,
      clear: killAll,
      begin: () => window.begin(),
      read: () => window.read(),
      stop: async () => {
        const report = window.read();
        await killAll();
        return report;
      },
    },
    killAll,
  );
}

await main();
