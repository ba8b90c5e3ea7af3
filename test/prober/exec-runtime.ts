// Stands in for the process runtime in the exec prober tests: only execSync is implemented, and it
// really spawns the command (in its own process group, killed on timeout), as the runtime does.

import { spawn } from 'node:child_process';
import type { ExecSyncResult, RuntimeService } from '../../src/runtime/cri.js';
import { NotFoundError } from '../../src/runtime/cri.js';

export interface ExecCall {
  containerId: string;
  cmd: string[];
  timeoutSeconds: number;
}

export function execOnlyRuntime(known: Set<string> = new Set(['abc'])): RuntimeService & { calls: ExecCall[] } {
  const calls: ExecCall[] = [];
  const execSync = (containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> => {
    calls.push({ containerId, cmd, timeoutSeconds });
    if (!known.has(containerId)) return Promise.reject(new NotFoundError(`container "${containerId}"`));
    return new Promise((resolve, reject) => {
      const child = spawn(cmd[0]!, cmd.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      const timer =
        timeoutSeconds > 0
          ? setTimeout(() => {
              timedOut = true;
              try {
                process.kill(-child.pid!, 'SIGKILL');
              } catch {
                /* already gone */
              }
            }, timeoutSeconds * 1000)
          : undefined;
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ exitCode: code ?? (signal ? 128 + 9 : 1), stdout: Buffer.concat(out), stderr: Buffer.concat(err), timedOut });
      });
    });
  };
  return { name: 'process', calls, execSync } as unknown as RuntimeService & { calls: ExecCall[] };
}
