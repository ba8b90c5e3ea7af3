// A preload that CPU-profiles the Node process it is loaded into, for processes no Node flag reaches
// (`--cpu-prof` is refused in NODE_OPTIONS, and the agent starts its runtime service itself):
// NODE_OPTIONS="--import <dist>/bench/lib/cpu-profile.js" PODVISOR_CPU_PROFILE_DIR=DIR makes every
// podvisor process (CLI, agent, runtime service) write DIR/<command>-<pid>.cpuprofile as it exits.

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/** Sampling interval, µs: finer than the inspector's 1 ms default, for calls of a few milliseconds. */
const SAMPLING_INTERVAL_US = 500;

function profileUntilExit(dir: string): void {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  session.post('Profiler.start');
  // `agent`, `runtime-serve`, `up`...: the podvisor command, after the script's path.
  const command =
    process.argv
      .slice(2, 4)
      .filter((a) => /^[a-z][a-z-]*$/.test(a))
      .join('-') || 'node';
  // The main thread's session answers synchronously, so the profile is written before the exit completes.
  process.once('exit', () =>
    session.post('Profiler.stop', (err, reply) => {
      if (!err) writeFileSync(join(dir, `${command}-${process.pid}.cpuprofile`), JSON.stringify(reply.profile));
    }),
  );
}

const dir = process.env.PODVISOR_CPU_PROFILE_DIR;
if (dir) profileUntilExit(dir);
