// Fuzzing the manifest loader: 10,000 manifests mutated from examples/ with a seeded PRNG (text
// mutations and structural ones, written as YAML or JSON), read in batches in-process through the
// loader and validator, and a few batches through the real CLI binary. Each must load or fail with
// ManifestError (exit 0 or 2), every message naming its file (or, in kubectl's form, the invalid
// object), no stack trace or internal exception text, and no file taking over 2 s (a generous
// deadline, not a timing). FUZZ_SEED and FUZZ_CASES override the seed and count.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { loadManifests, ManifestError } from '../../src/config/load.js';
import { validateForProcessRuntime } from '../../src/runtime/process/validation.js';
import { prng } from '../fixtures/prng.js';

const examplesDir = fileURLToPath(new URL('../../../examples/', import.meta.url));
const mainJs = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));
const seed = Number(process.env.FUZZ_SEED ?? 20260102);
const cases = Number(process.env.FUZZ_CASES ?? 10_000);
const batchSize = 500;
const perFileDeadlineMs = 2000;

const snippets = [
  '[',
  ']',
  '{',
  '}',
  '&a ',
  '*a',
  '<<: *a',
  '!!merge <<',
  '!!binary ',
  '!!str ',
  '!!int ',
  '!!float ',
  '!!map ',
  ': ',
  '- ',
  '"',
  "'",
  '|',
  '>',
  '#',
  '\t',
  '\u0000',
  '\u2028',
  '\ufeff',
  '---\n',
  '...\n',
  '%YAML 1.1\n',
  '? ',
  '@',
  '`',
  '!',
  '&',
  '*',
  ',',
  '\\',
  '\n',
  'uid: ../../victim',
  'timeoutSeconds: 3000000000',
  'periodSeconds: 2147483648',
  'terminationGracePeriodSeconds: 3000000',
  '9'.repeat(40),
  '-1',
  '1e400',
  '.inf',
  '.nan',
  '0x7fffffff',
  '0o777',
  'null',
  '~',
  'yes',
  'on',
  'no',
  '2001-12-14t21:59:43.10-05:00',
  '['.repeat(150),
  '{a: '.repeat(120),
  'x: &b [*b]',
  'k: &c {a: *c}',
  'apiVersion: v1\nkind: List\nitems: [',
  'kind: Deployment',
  'apiVersion: apps/v1',
  'name: "../x"',
  'name: ' + 'a'.repeat(300),
];

const values: unknown[] = [
  3000000000,
  -1,
  2147483648,
  -2147483649,
  1e308,
  0,
  0.5,
  '',
  'x'.repeat(300),
  '../../victim',
  null,
  true,
  false,
  [],
  {},
  '<<',
  'Ω',
  '\u0000',
  // eslint-disable-next-line no-loss-of-precision -- past 2^53 on purpose
  9007199254740993,
  '3000000000',
  { '<<': { a: 1 } },
  [[[[]]]],
  { a: { b: { c: {} } } },
];

function deep(depth: number, rand: () => number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = rand() < 0.5 ? [v] : { k: v };
  return v;
}

function mutateText(text: string, rand: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const at = () => Math.floor(rand() * (text.length + 1));
  const n = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) {
    const r = rand();
    const p = at();
    if (r < 0.25) text = text.slice(0, p) + pick(snippets) + text.slice(p);
    else if (r < 0.4) text = text.slice(0, p) + pick(snippets) + text.slice(p + 1);
    else if (r < 0.5) text = text.slice(0, p) + text.slice(p + 1 + Math.floor(rand() * 20));
    else if (r < 0.6) text = text.slice(0, p);
    else if (r < 0.75) {
      const lines = text.split('\n');
      const a = Math.floor(rand() * lines.length);
      const b = Math.floor(rand() * lines.length);
      if (rand() < 0.5) lines.splice(a, 0, lines[b]!);
      else [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      text = lines.join('\n');
    } else if (r < 0.85) {
      const lines = text.split('\n');
      const a = Math.floor(rand() * lines.length);
      lines[a] = rand() < 0.5 ? ` ${lines[a]}` : lines[a]!.replace(/^ /, '');
      text = lines.join('\n');
    } else {
      // eslint-disable-next-line no-loss-of-precision -- past 2^64 on purpose
      text = text.replace(/\b\d+\b/, () => String(pick([3000000000, -1, 2147483648, 0, 99999999999999999999, 1.5])));
    }
  }
  return text;
}

/** Every [container, key] pair of a value, for a structural mutation to pick from. */
function slots(v: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []): typeof out {
  if (Array.isArray(v)) v.forEach((x, i) => (out.push([v, i]), slots(x, out)));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push([v as Record<string, unknown>, k]);
      slots(x, out);
    }
  }
  return out;
}

function mutateValue(value: unknown, rand: () => number): unknown {
  const v = structuredClone(value);
  const n = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) {
    const all = slots(v);
    if (!all.length) break;
    const [holder, key] = all[Math.floor(rand() * all.length)]!;
    const r = rand();
    const set = (x: unknown) => ((holder as Record<string | number, unknown>)[key] = x);
    if (r < 0.55) set(structuredClone(values[Math.floor(rand() * values.length)]));
    else if (r < 0.7) set(deep(Math.floor(rand() * 130), rand));
    else if (r < 0.85 && !Array.isArray(holder)) delete (holder as Record<string, unknown>)[key as string];
    else if (!Array.isArray(holder)) (holder as Record<string, unknown>)[`${String(key)}x`] = 1;
  }
  return v;
}

interface Case {
  name: string;
  text: string;
}

function generate(count: number): Case[] {
  const rand = prng(seed);
  const examples = readdirSync(examplesDir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const texts = examples.map((f) => readFileSync(join(examplesDir, f), 'utf8'));
  const parsed = texts.map((t) => parseAllDocuments(t).map((d) => d.toJS() as unknown));
  const out: Case[] = [];
  for (let i = 0; i < count; i++) {
    const e = Math.floor(rand() * texts.length);
    const id = String(i).padStart(5, '0');
    if (rand() < 0.6) {
      out.push({ name: `case-${id}.yaml`, text: mutateText(texts[e]!, rand) });
    } else {
      const docs = parsed[e]!;
      const doc = mutateValue(docs[Math.floor(rand() * docs.length)], rand);
      if (rand() < 0.5) out.push({ name: `case-${id}.json`, text: JSON.stringify(doc) ?? 'null' });
      else {
        let text: string;
        try {
          text = stringify(doc, { aliasDuplicateObjects: false });
        } catch {
          text = JSON.stringify(doc) ?? 'null';
        }
        out.push({ name: `case-${id}.yaml`, text });
      }
    }
  }
  return out;
}

const internal =
  /\n\s+at |\bat [\w.<>]+ \(|TypeError|ReferenceError|RangeError|SyntaxError|Cannot read prop|is not a function|undefined is not|Maximum call stack/;
const objectInvalid = /^The \w+ ".*" is invalid: /s;

function checkProblem(file: string, problem: string): void {
  assert.doesNotMatch(problem, internal, `${file}: internal text in: ${problem}`);
  assert.ok(problem.includes(file) || objectInvalid.test(problem) || problem === 'error: no objects passed', `${file}: no file name in: ${problem}`);
}

test(`fuzz: ${cases} mutated manifests (seed ${seed}) load or fail cleanly, each within ${perFileDeadlineMs} ms`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-fuzz-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const all = generate(cases);
  let loaded = 0;
  let rejected = 0;
  let slowest = 0;
  for (let b = 0; b < all.length; b += batchSize) {
    const batch = all.slice(b, b + batchSize);
    const batchDir = join(dir, `batch-${b / batchSize}`);
    mkdirSync(batchDir);
    for (const c of batch) writeFileSync(join(batchDir, c.name), c.text);
    for (const c of batch) {
      const started = performance.now();
      try {
        await loadManifests([c.name], { cwd: batchDir, nodeName: 'node-1', extraValidation: validateForProcessRuntime });
        loaded++;
      } catch (err) {
        if (!(err instanceof ManifestError)) assert.fail(`${c.name} (seed ${seed}): threw ${String(err)}`);
        rejected++;
        for (const p of err.problems) checkProblem(c.name, p);
      }
      const took = performance.now() - started;
      slowest = Math.max(slowest, took);
      assert.ok(took <= perFileDeadlineMs, `${c.name} (seed ${seed}) took ${took.toFixed(0)} ms`);
    }
    rmSync(batchDir, { recursive: true, force: true });
  }
  t.diagnostic(`loaded ${loaded}, rejected ${rejected}, slowest ${slowest.toFixed(0)} ms`);
  assert.ok(rejected > cases / 10 && loaded > 0, 'the mutations produce both outcomes');
});

test('fuzz through the real CLI: validate on directories of mutated manifests exits 0 or 2 with clean messages', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-fuzz-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sample = generate(Math.min(cases, 600)).slice(-60);
  for (let b = 0; b < sample.length; b += 20) {
    const batchDir = join(dir, `b${b}`);
    mkdirSync(batchDir);
    const batch = sample.slice(b, b + 20);
    for (const c of batch) writeFileSync(join(batchDir, c.name), c.text);
    const r = spawnSync(process.execPath, [mainJs, 'validate', '-f', batchDir], { encoding: 'utf8', timeout: 60_000 });
    assert.ok(r.status === 0 || r.status === 2, `exit ${r.status}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, internal);
    assert.doesNotMatch(r.stderr, /\(node:\d+\)/, 'no process warnings');
    // Each message starts `error: <file>…` or `The <Kind> "<name>" is invalid`; continuation lines start `* `.
    for (const line of r.stderr.split('\n').filter((l) => l && !l.startsWith('* ') && !l.startsWith('Warning: '))) {
      assert.ok(batch.some((c) => line.includes(c.name)) || objectInvalid.test(line) || line === 'error: no objects passed', `no file name in: ${line}`);
    }
  }
});
