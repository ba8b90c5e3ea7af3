// One run of a program timed from outside: wall and CPU (user + system of the child), as the client
// and start-up scenarios compare commands with `node -e 0` and kubectl.

import { spawn } from 'node:child_process';

export interface TimedRun {
  /** ms from spawn to exit. */
  wall: number;
  /** ms of user + system CPU of the child and its children. */
  cpu: number;
  /** Exit status (bash's $? of the program). */
  status: number;
}

/**
 * Wall ms and CPU ms of one run of `file ARGS`, output to /dev/null, from bash's `time`: the child's
 * getrusage, whose CPU is exact to the millisecond (/proc's clock ticks are 10 ms, a tenth of the floor).
 */
export function timeWithCpu(file: string, args: string[]): Promise<TimedRun> {
  const script = 'TIMEFORMAT="%3R %3U %3S"; { time "$@" </dev/null >/dev/null 2>&1; } 2>&1; echo "$?"';
  return new Promise((resolve, reject) => {
    let out = '';
    const child = spawn('bash', ['-c', script, 'time', file, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', () => {
      const [real, user, sys, status] = out.trim().split(/\s+/).map(Number);
      if ([real, user, sys, status].some((v) => v === undefined || Number.isNaN(v))) {
        reject(new Error(`cannot read the timing of ${file} ${args.join(' ')}: ${out}`));
        return;
      }
      resolve({ wall: real! * 1000, cpu: (user! + sys!) * 1000, status: status! });
    });
  });
}
