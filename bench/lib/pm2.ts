// pm2, the process manager the bench compares podvisor with: installed once with npm into a cache
// outside the clone (~/.cache/podvisor-bench/pm2, or $PODVISOR_BENCH_CACHE/pm2), run with a PM2_HOME
// of the bench's own so that it never touches a pm2 the user runs.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { runNode, type CliRun } from './agent-process.js';

export const PM2_VERSION = '7';

function cacheDir(): string {
  return join(process.env.PODVISOR_BENCH_CACHE ?? join(homedir(), '.cache', 'podvisor-bench'), 'pm2');
}

/**
 * The pm2 CLI script, installed with `npm install --prefix` into the cache when it is not there yet;
 * a reason instead when npm cannot (no network, no npm).
 */
export function installPm2(log: (msg: string) => void): { bin: string; version: string } | { skip: string } {
  const prefix = cacheDir();
  const bin = join(prefix, 'node_modules', 'pm2', 'bin', 'pm2');
  const version = () => (JSON.parse(readFileSync(join(prefix, 'node_modules', 'pm2', 'package.json'), 'utf8')) as { version: string }).version;
  if (existsSync(bin) && version().startsWith(`${PM2_VERSION}.`)) return { bin, version: version() };
  log(`pm2: installing pm2@${PM2_VERSION} into ${prefix}`);
  const r = spawnSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', `pm2@${PM2_VERSION}`], {
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  if (r.error || r.status !== 0 || !existsSync(bin)) {
    const why = r.error?.message ?? (r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' ');
    return { skip: `pm2@${PM2_VERSION} could not be installed into ${prefix} (${why || `npm exited ${r.status}`}): the pm2 side is skipped` };
  }
  return { bin, version: version() };
}

/** One pm2 daemon with its own PM2_HOME. */
export class Pm2 {
  constructor(
    private readonly bin: string,
    readonly home: string,
  ) {}

  /** `pm2 ARGS`, timed from spawn to exit. */
  run(args: string[], timeoutMs = 600_000): Promise<CliRun> {
    return runNode([this.bin, ...args], timeoutMs, { ...process.env, PM2_HOME: this.home });
  }

  /** The daemon's pid (PM2_HOME/pm2.pid), once it runs. */
  daemonPid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.home, 'pm2.pid'), 'utf8').trim());
      return pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }
}

/** An ecosystem file's apps: each command a pm2 app that runs it as is (no Node interpreter) and restarts it at once. */
export function pm2Apps(names: readonly string[], commands: readonly string[][]): object {
  return {
    apps: names.map((name, i) => ({
      name,
      script: commands[i]![0],
      args: commands[i]!.slice(1),
      interpreter: 'none',
      autorestart: true,
      restart_delay: 0,
      min_uptime: 0,
    })),
  };
}
