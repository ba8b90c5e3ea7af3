// Renders scenario results as a plain-text table: one block per scenario and size, one row per
// figure, the agent next to its floor, the ratio, and the target with met/missed.

import type { Figure, ScenarioResult } from './figures.js';

export function formatNumber(v: number | null): string {
  if (v === null) return '—';
  if (Number.isInteger(v)) return String(v);
  const abs = Math.abs(v);
  if (abs >= 1000) return Math.round(v).toString();
  if (abs >= 100) return v.toFixed(0);
  if (abs >= 10) return v.toFixed(1);
  if (abs >= 1) return v.toFixed(2);
  if (abs >= 0.01) return v.toFixed(3);
  return v.toPrecision(2);
}

function statusText(f: Figure, size: number): string {
  if (!f.target) return '';
  const where = f.target.definedAt !== undefined && f.target.definedAt !== size ? ` (target at N=${f.target.definedAt})` : '';
  return `${f.target.status}${where}`;
}

function pad(cells: string[], widths: number[]): string {
  return cells
    .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
    .join('  ')
    .trimEnd();
}

export function renderTable(results: ScenarioResult[]): string {
  const header = ['figure', 'unit', 'agent', 'floor', 'ratio', 'target', 'status'];
  const out: string[] = [];
  for (const r of results) {
    const lowered = r.requestedSize !== undefined && r.requestedSize !== r.size ? ` (asked ${r.requestedSize})` : '';
    out.push(`== ${r.scenario}  N=${r.size}${lowered}`);
    if (r.error) {
      out.push(`   FAILED: ${r.error.split('\n')[0]}`);
      for (const n of r.notes) out.push(`   note: ${n}`);
      out.push('');
      continue;
    }
    const rows = r.figures.map((f) => [
      f.label,
      f.unit,
      formatNumber(f.agent),
      formatNumber(f.floor),
      f.ratio === null ? '—' : `${formatNumber(f.ratio)}×`,
      f.target?.text ?? '',
      statusText(f, r.size),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    out.push('   ' + pad(header, widths));
    for (const row of rows) out.push('   ' + pad(row, widths));
    for (const n of r.notes) out.push(`   note: ${n}`);
    out.push('');
  }
  return out.join('\n');
}
