// What a scenario reports: figures, each an agent value next to the floor measured in the same run
// and their ratio, with the target where one is set (reported, never asserted).

export type Status = 'met' | 'missed' | 'n/a';

export interface Target {
  /** e.g. `≤ 1.5× floor`, `≤ 20 ms`, `= 0`. */
  text: string;
  /** Which value the bound applies to. */
  on: 'agent' | 'ratio';
  op: '<=' | '<' | '=';
  value: number;
  /** The size the issue sets the target for; other sizes are still evaluated, and say so. */
  definedAt?: number;
}

export interface Figure {
  /** Stable key, e.g. `cpu_s_per_1000_probes`. */
  key: string;
  label: string;
  unit: string;
  agent: number | null;
  floor: number | null;
  /** agent / floor, null when either is missing or the floor is not positive (no meaningful ratio). */
  ratio: number | null;
  target?: Target & { status: Status };
}

export interface ScenarioResult {
  scenario: string;
  size: number;
  /** Size asked for, when the limits check lowered it. */
  requestedSize?: number;
  figures: Figure[];
  notes: string[];
  error?: string;
  /** Raw per-process numbers behind the figures, for whoever wants to recompute them. */
  raw?: Record<string, unknown>;
}

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

export function evaluate(t: Target, agent: number | null, ratio: number | null): Status {
  const v = t.on === 'agent' ? agent : ratio;
  if (!finite(v)) return 'n/a';
  switch (t.op) {
    case '<=':
      return v <= t.value ? 'met' : 'missed';
    case '<':
      return v < t.value ? 'met' : 'missed';
    case '=':
      return v === t.value ? 'met' : 'missed';
  }
}

export function figure(key: string, label: string, unit: string, agent: number | null | undefined, floor: number | null | undefined, target?: Target): Figure {
  const a = finite(agent) ? agent : null;
  const f = finite(floor) ? floor : null;
  const ratio = a !== null && f !== null && f > 0 ? a / f : null;
  const fig: Figure = { key, label, unit, agent: a, floor: f, ratio };
  if (target) fig.target = { ...target, status: evaluate(target, a, ratio) };
  return fig;
}
