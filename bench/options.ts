// Command-line options of `npm run bench`: which scenarios, which sizes, how long to measure, and
// where to write the results.

export const SCENARIOS = [
  'probe-load',
  'probe-history',
  'exec-probes',
  'pod-start',
  'failure-detection',
  'idle',
  'manifest-parse',
  'startup',
  'clients',
  'runtime-service',
  'agent',
  'agent-restart',
  'kube-api',
  'cluster',
  'cluster-nodes',
  'containerd',
  'service-proxy',
  'ingress',
  'endpoint-update',
  'cluster-dns',
  'pm2',
  'workloads',
  'spawner',
  'scheduler',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  scenarios: ScenarioName[];
  /** Overrides every selected scenario's default sizes. */
  sizes?: number[];
  /** Measurement window, ms; each scenario has its own default. */
  durationMs?: number;
  /** Settling time before measuring, ms; each scenario has its own default. */
  warmupMs?: number;
  /** failure-detection trials. */
  trials: number;
  /** Alternating rounds of the pm2, clients and spawner scenarios. */
  rounds?: number;
  out?: string;
  help: boolean;
}

export const USAGE = `usage: npm run bench -- [options]

  -s, --scenario LIST   comma-separated: ${SCENARIOS.join(', ')} (default: all)
  -n, --sizes LIST      pod counts, e.g. 100,500 (default: each scenario's own)
  -d, --duration DUR    measurement window, e.g. 20s, 1500ms, 1m (default: per scenario)
  -w, --warmup DUR      settling time before measuring (default: per scenario)
      --trials N        failure-detection trials (default: 20; --sizes overrides it)
      --rounds N        alternating rounds of the pm2 (default: 3), clients (default: 7) and spawner (default: 3) scenarios
  -o, --out PATH        results file (default: bench/results/latest.json)
  -h, --help            this text

Defaults: probe-load N=100,500,1000 for 20s; exec-probes N=100,1000 for 20s;
pod-start N=1,10,100; failure-detection N=20 trials; idle N=100 for 60s;
manifest-parse N=1,10 (MB of manifest).
runtime-service N=100 (start, exec probes, RSS, kill -9 of the agent) for 20s.
containerd N=1,10 (pod start and exec probes on a private containerd; skipped without root/containerd) for 10s.
agent N=100,1000 (podvisor agent: up -d, /pods, /containerLogs, idle for 30s, client commands);
clients N=20 (get pods, logs, describe, exec against kubectl on the same agent, --version, validate, and node -e 0);
agent-restart N=100 (kill -9 of podvisor agent); kube-api N=1000 (Table list, watch);
cluster N=100 (joined to a real kube-apiserver, when its binaries are built);
cluster-nodes N=50,250 (Deployment to Available on 5 podvisor nodes vs 1, under the real scheduler and controller-manager; API requests, CPU, RSS);
pm2 N=100 (podvisor, pm2 7 and a spawn floor in alternating rounds: start, restart, idle for 20s,
client commands against kubectl, teardown; pm2 is installed into ~/.cache/podvisor-bench, skipped when it cannot be);
spawner N=100 (the runtime service's starts with its perl spawner against forking them itself, alternating rounds);
scheduler N=100,500 (the scheduler's filters for one pod with N pods bound to the node, in process; then the time from a freed CPU to the pending pod's start on a real agent).`;

export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new Error(`invalid duration ${JSON.stringify(text)} (e.g. 20s, 1500ms, 1m)`);
  const v = Number(m[1]);
  return m[2] === 'ms' ? v : m[2] === 'm' ? v * 60_000 : v * 1000;
}

function parseSizes(text: string): number[] {
  const sizes = text.split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`invalid sizes ${JSON.stringify(text)} (positive integers, comma-separated)`);
  return sizes;
}

function parseScenarios(text: string): ScenarioName[] {
  if (text === 'all') return [...SCENARIOS];
  const names = text.split(',').map((s) => s.trim());
  for (const n of names) {
    if (!(SCENARIOS as readonly string[]).includes(n)) throw new Error(`unknown scenario ${JSON.stringify(n)} (one of ${SCENARIOS.join(', ')})`);
  }
  return names as ScenarioName[];
}

export function parseOptions(argv: string[]): BenchOptions {
  const opts: BenchOptions = { scenarios: [...SCENARIOS], trials: 20, help: false };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i]!;
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => {
      if (value !== undefined) return value;
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    switch (arg) {
      case '-s':
      case '--scenario':
      case '--scenarios':
        opts.scenarios = parseScenarios(next());
        break;
      case '-n':
      case '--sizes':
      case '--size':
        opts.sizes = parseSizes(next());
        break;
      case '-d':
      case '--duration':
        opts.durationMs = parseDuration(next());
        break;
      case '-w':
      case '--warmup':
        opts.warmupMs = parseDuration(next());
        break;
      case '--trials': {
        const n = Number(next());
        if (!Number.isInteger(n) || n < 1) throw new Error('--trials needs a positive integer');
        opts.trials = n;
        break;
      }
      case '--rounds': {
        const n = Number(next());
        if (!Number.isInteger(n) || n < 1) throw new Error('--rounds needs a positive integer');
        opts.rounds = n;
        break;
      }
      case '-o':
      case '--out':
        opts.out = next();
        break;
      case '-h':
      case '--help':
        opts.help = true;
        break;
      default:
        throw new Error(`unknown option ${arg}\n\n${USAGE}`);
    }
  }
  return opts;
}
