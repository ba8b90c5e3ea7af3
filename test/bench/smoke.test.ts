// Smoke run of the benchmark suite at tiny sizes: checks that the bench works end to end and reports
// every figure (agent, floor, target) in the table and the JSON — never the values themselves.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../bench/main.js', import.meta.url));

/** The figures the issue asks each scenario for, by key. */
const expected: Record<string, string[]> = {
  'probe-load': [
    'probes_per_s',
    'cpu_s_per_1000_probes',
    'cpu_pct_core',
    'rss_mb',
    'lateness_p50_ms',
    'lateness_p99_ms',
    'lateness_max_ms',
    'probe_errors',
    'probe_failures',
    'time_wait',
  ],
  'failure-detection': [
    'detection_p50_ms',
    'detection_p99_ms',
    'detection_max_ms',
    'excess_p50_ms',
    'excess_p99_ms',
    'excess_max_ms',
    'reaction_p99_ms',
    'missed_trials',
  ],
  idle: ['cpu_pct_core', 'cpu_s', 'service_cpu_s', 'rss_mb', 'service_rss_mb', 'rss_peak_mb'],
  startup: ['version_wall', 'version_cpu', 'validate_wall', 'validate_cpu'],
};
/** Figures that break an agent figure down (the runtime service's share), with no floor of their own. */
const partsOfAgent: Record<string, string[]> = { idle: ['service_cpu_s', 'service_rss_mb'] };
/** Figures with a target, so the table shows met or missed next to them. */
const withTarget: Record<string, string[]> = {
  'probe-load': ['cpu_s_per_1000_probes', 'rss_mb', 'lateness_p99_ms', 'probe_errors', 'probe_failures'],
  'failure-detection': ['excess_p99_ms', 'missed_trials'],
  idle: ['cpu_pct_core', 'rss_mb'],
  startup: ['version_wall', 'version_cpu', 'validate_wall', 'validate_cpu'],
};

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('a tiny bench run reports every figure next to its floor', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-bench-smoke-'));
  try {
    const out = join(dir, 'latest.json');
    const res = await runBench(['--scenario', 'probe-load,failure-detection,idle,startup', '--sizes', '3', '--duration', '2s', '--warmup', '1s', '--out', out]);
    assert.equal(res.code, 0, `bench failed:\n${res.stdout}\n${res.stderr}`);

    const record = JSON.parse(readFileSync(out, 'utf8'));
    for (const field of ['cpuModel', 'cores', 'memoryBytes', 'node', 'date']) assert.ok(field in record.machine, `machine.${field} missing`);
    assert.deepEqual(
      record.results.map((r: { scenario: string }) => r.scenario),
      Object.keys(expected),
    );
    for (const r of record.results) {
      assert.equal(r.error, undefined, `${r.scenario}: ${r.error}`);
      assert.deepEqual(
        r.figures.map((f: { key: string }) => f.key),
        expected[r.scenario],
        `${r.scenario} figures`,
      );
      for (const f of r.figures) {
        assert.equal(typeof f.agent, 'number', `${r.scenario}.${f.key}: no agent figure`);
        if (!(partsOfAgent[r.scenario] ?? []).includes(f.key)) assert.equal(typeof f.floor, 'number', `${r.scenario}.${f.key}: no floor figure`);
        assert.ok('ratio' in f, `${r.scenario}.${f.key}: no ratio`);
        assert.equal(Boolean(f.target), withTarget[r.scenario]!.includes(f.key), `${r.scenario}.${f.key}: target`);
        assert.ok(res.stdout.includes(f.label), `table lacks ${f.label}`);
      }
    }
    assert.match(res.stdout, /\b(met|missed)\b/);
    assert.match(res.stdout, /== probe-load {2}N=3/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
