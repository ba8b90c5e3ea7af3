// The manifest YAML reader against the yaml package, which stays the authority: for every input the
// reader either gives up or returns exactly the documents (indexes and values) the yaml package path
// returns (podvisor's schema and kubectl's JSON conversion), and it never accepts what that rejects. Inputs: the examples and fixtures,
// hand-written cases, and 6,000 generated documents (seeded; a quarter kept to what the reader
// reads, half mutated into odd or invalid YAML). MANIFEST_YAML_SEED and MANIFEST_YAML_CASES override the seed and count.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { readManifestYAML } from '../../src/config/manifest-yaml.js';
import { parseYAML } from '../../src/config/documents.js';
import { prng } from '../fixtures/prng.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const seed = Number(process.env.MANIFEST_YAML_SEED ?? 20261203);
const cases = Number(process.env.MANIFEST_YAML_CASES ?? 6000);

/** What the yaml package path reads: the non-null documents, or undefined when it reports an error. */
function yamlReads(text: string): { index: number; value: unknown }[] | undefined {
  const parsed = parseYAML({ name: 'case', text }, false);
  return parsed.errors.length ? undefined : parsed.documents.map(({ index, value }) => ({ index, value }));
}

/** Checks one input; true when the reader read it (did not give up). */
function agrees(text: string, what: string): boolean {
  const mine = readManifestYAML(text);
  if (mine === undefined) return false;
  const theirs = yamlReads(text);
  assert.ok(theirs, `${what}: the reader accepted what the yaml package rejects:\n${text}`);
  assert.deepEqual(mine, theirs, `${what}: values differ for:\n${text}`);
  return true;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

test('every example is read by the reader, with the values the yaml package gives', () => {
  const examples = yamlFiles(join(root, 'examples'));
  assert.ok(examples.length >= 10);
  for (const f of examples) assert.ok(agrees(readFileSync(f, 'utf8'), f), `${f}: the reader gave up on an example`);
});

test('the fixtures are read alike or left to the yaml package', () => {
  for (const f of yamlFiles(join(root, 'test'))) agrees(readFileSync(f, 'utf8'), f);
});

test('hand-written cases: read alike, or given up', () => {
  const read = [
    "a: 1\nb: -2\nc: 1.5\nd: yes\ne: Off\nf: ~\ng:\nh: \"yes\"\ni: 'it''s'\n",
    'image: nginx:1.25\nurl: http://x:80/a#b\ncmd: echo a # comment\nx: a#b\n',
    'list:\n- a\n- b: 1\n  c: 2\n-\n  - x\n- [p, "q", \'r\', 3, true]\n- {}\n- []\n- {cpu: "1", memory: 64Mi}\n',
    'outer:\n  inner:\n    - x\n    - y\n  other: |\n    line 1\n      more\n\n    # not a comment\n  after: z\n',
    'k: |-\n  a\n  b\n\n\nj: |+\n  a\n\n\nl: >\n  folded\n  text\n\n  new para\nm: >-\n  x\n  y\n',
    '# leading\n---\na: 1\n--- # two\nb: 2\n---\n# only a comment\n---\nc: 3\n',
    'a: 1\n---\n---\nb: 2\n',
    'labels:\n  app.kubernetes.io/name: web\n  "quoted key": v\n  \'sq\': w\n',
    'e: "tab\\there \\u00e9 \\x41 \\\\ \\""\n',
    'nz: -0\nz: 0\nbig: 123456789012345\nneg: -1.25\n',
    // Numbers in every form go-yaml reads, and what looks like one to YAML 1.1 but not to kubectl.
    'a: 0755\nb: 0x1F\nc: 1e3\nd: 1_000\ne: 0o12\nf: 0b101\ng: +12\nh: .5\ni: 08\nj: 9223372036854775808\n',
    'name: E5\nvalue: e3\nx: E99\nk: 1:20\nz: 2001-12-14\nw: 1e400\nv: ._5\nu: [E5, e3, 1e3, 0x1F, 2001-12-14]\n',
    'a:\n  - 1\n  - 2\nb:\n- 3\n',
    'a:   \n  b: 1\n',
    'key:\n  plain on its own line\n',
    // YAML 1.2 spec example 8.10, folded lines around more-indented ones.
    'k: >\n\n  folded\n  line\n\n  next\n  line\n    * bullet\n\n    * list\n    * lines\n\n  last\n  line\n\n# Comment\n',
  ];
  for (const [i, t] of read.entries()) assert.ok(agrees(t, `case ${i}`), `the reader gave up on case ${i}:\n${t}`);
  const givenUp = [
    'a: &x 1\nb: *x\n',
    'a: !!str 1\n',
    '<<: {a: 1}\n',
    'a: .inf\n',
    'a: -.Inf\n',
    'a: .nan\n',
    'a: [.NaN]\n',
    'on: push\n',
    '1: one\n',
    'a b: c\n',
    'a:\n  multi\n  line\n',
    'a: "multi\n  line"\n',
    'a: [x,\n  y]\n',
    'a:\tb\n',
    'a: 1\r\nb: 2\r\n',
    '\ufeffa: 1\n',
    '%YAML 1.1\n---\na: 1\n',
    'a: 1\n...\n',
    '? a\n: b\n',
    'a: |2\n   x\n',
    'plain\n',
    'a: 1\na: 2\n',
    '__proto__: x\n',
    '- - x\n',
    'n: 1\n',
    'a: b: c\n',
    'a: x\n  b: y\n',
    '- a\nb: c\n',
    'a: "x" y\n',
  ];
  for (const t of givenUp) assert.equal(readManifestYAML(t), undefined, `expected to give up on:\n${t}`);
});

const plainPool = [
  'web',
  'busybox:1.36',
  'sh',
  '-c',
  '/bin/sh',
  'echo hi',
  '80',
  '3',
  '0.5',
  '100m',
  '64Mi',
  'IfNotPresent',
  'http://x:80/a',
  'a.b-c_d',
  'yes',
  'no',
  'on',
  'Off',
  'y',
  'N',
  'true',
  'False',
  '~',
  'null',
  'NULL',
  '',
  '0',
  '-0',
  '7',
  '42',
  '-17',
  '0755',
  '0x1F',
  '0b101',
  '1e3',
  'e3',
  'E+5',
  'e',
  'Email',
  '1_000',
  '.5',
  '-.inf',
  '.NaN',
  '1.5',
  '-2.25',
  '3.',
  '12:30',
  '1:20:30',
  '2001-12-14',
  '2001-12-14t21:59:43.10-05:00',
  '+1',
  'nginx:1.25',
  'http://a:b/c',
  'a #b',
  'a#b',
  'x y z',
  '-c',
  '--flag=1',
  '<<',
  'a: b',
  'key:',
  'é ü',
  '100m',
  '64Mi',
  '1.0.0',
  '1e',
  '~x',
  '@x',
  '`x',
  '%x',
  '!x',
  '&a',
  '*a',
  '?x',
  '-',
  '- x',
  '[a]',
  '{a}',
  'a,b',
  'a]b',
  '"q',
  'q"',
  "it's",
  'a  b',
  '123456789012345678',
  '0.000001',
  '1.10',
  'web',
  'busybox:1.36',
  'sh',
  '/bin/sh',
  'echo "hi"',
  "x'y",
  'E5',
  'E99',
  '0o12',
  '08',
  '+12',
  '1e400',
  '._5',
  '9223372036854775808',
  '0x8000000000000000',
  '-0.0',
  '.inf',
  'Yes',
  'oN',
  '0b+1',
];
const stringPool = ['', 'a\nb', 'tab\there', 'quote"s', "apos'", 'back\\slash', 'é', '\u2028', 'yes', '12', ' lead', 'trail ', '# c', 'a: b'];
const goodKeys = ['name', 'image', 'command', 'args', 'app.kubernetes.io/name', 'x_y', 'k-8', 'ports', 'env', 'value'];
const keyPool = [
  'name',
  'image',
  'a',
  'b',
  'c',
  'app.kubernetes.io/name',
  'x_y',
  'k-8',
  'on',
  '1',
  '"quoted key"',
  "'sq'",
  'a b',
  '<<',
  '-k',
  'k:',
  'Y',
  'null',
  'E5',
  'e3',
  '1e3',
  '0x1F',
  '.inf',
  '1.5',
  '~',
  '9223372036854775808',
];
const blockLines = ['echo hi', '  indented', '', '# not a comment', 'a: b', '- x', 'trailing  ', "'q'", 'x   y'];
const blockHeaders = ['|', '|-', '|+', '>', '>-', '>+', '|2', '> # c'];

/** A generated source; clean ones keep to the scalars, keys and headers the reader is meant to read. */
function generate(rand: () => number, clean: boolean): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const scalar = (): string => {
    const r = rand();
    if (r < 0.35 || (clean && r < 0.6)) return pick(plainPool.slice(0, 14));
    if (r < 0.6) return pick(plainPool);
    if (r < 0.8) return JSON.stringify(pick(stringPool));
    return `'${pick(stringPool).replaceAll("'", "''")}'`;
  };
  const key = () => (clean || rand() < 0.8 ? pick(goodKeys) : pick(keyPool));
  const comment = () => (rand() < 0.1 ? ' # note' : '');
  const flow = (): string => {
    if (rand() < 0.5) return `[${Array.from({ length: Math.floor(rand() * 4) }, scalar).join(', ')}]`;
    return `{${Array.from({ length: Math.floor(rand() * 3) }, () => `${key()}: ${scalar()}`).join(', ')}}`;
  };
  // A node's lines at indentation ind; `inline` is what goes after `key:` or `- ` on the same line.
  const node = (ind: number, depth: number): { inline: string; lines: string[] } => {
    const pad = ' '.repeat(ind);
    const r = rand();
    if (depth > 3 || r < 0.45) return { inline: ` ${scalar()}${comment()}`, lines: [] };
    if (r < 0.55) return { inline: ` ${flow()}${comment()}`, lines: [] };
    if (r < 0.65) {
      const body = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(blockLines)).map((l) => (l === '' ? '' : `${pad}  ${l}`));
      return { inline: ` ${clean || rand() < 0.7 ? pick(blockHeaders.slice(0, 6)) : pick(blockHeaders)}`, lines: body };
    }
    if (r < 0.83) {
      const lines: string[] = [];
      for (let i = 0, n = 1 + Math.floor(rand() * 3); i < n; i++) {
        const child = node(ind + 2, depth + 1);
        lines.push(`${pad}  ${key()}:${child.inline}`, ...child.lines);
        if (rand() < 0.1) lines.push(rand() < 0.5 ? '' : `${pad}# between`);
      }
      return { inline: comment(), lines };
    }
    const dashInd = rand() < 0.4 ? ind : ind + 2;
    const dpad = ' '.repeat(dashInd);
    const lines: string[] = [];
    for (let i = 0, n = 1 + Math.floor(rand() * 3); i < n; i++) {
      if (rand() < 0.4) {
        // `- key: value` and more keys lined up under the first.
        const first = node(dashInd + 2, depth + 1);
        lines.push(`${dpad}- ${key()}:${first.inline}`, ...first.lines);
        if (rand() < 0.6) {
          const second = node(dashInd + 2, depth + 1);
          lines.push(`${dpad}  ${key()}:${second.inline}`, ...second.lines);
        }
      } else {
        const child = node(dashInd, depth + 1);
        lines.push(`${dpad}-${child.inline}`, ...child.lines);
      }
    }
    return { inline: comment(), lines };
  };
  const doc = () => {
    const lines: string[] = [];
    for (let i = 0, n = 1 + Math.floor(rand() * 4); i < n; i++) {
      const child = node(0, 0);
      lines.push(`${key()}:${child.inline}`, ...child.lines);
    }
    return lines.join('\n');
  };
  const docs = Array.from({ length: 1 + Math.floor(rand() * 2) }, doc);
  const sep = () => (clean || rand() < 0.8 ? '---' : pick(['--- # doc', '---\n', '---x', '...']));
  return `${rand() < 0.2 ? '# leading\n' : ''}${rand() < 0.2 ? '---\n' : ''}${docs.join(`\n${sep()}\n`)}${rand() < 0.9 ? '\n' : ''}`;
}

const mutations = [' ', '-', ':', '#', '\n', '"', "'", '[', ']', '{', '}', '|', '>', '&', '*', '!', '\t', ',', '?', '  '];

function mutate(text: string, rand: () => number): string {
  const at = Math.floor(rand() * (text.length + 1));
  const r = rand();
  if (r < 0.35) return text.slice(0, at) + text.slice(at + 1);
  if (r < 0.75) return text.slice(0, at) + mutations[Math.floor(rand() * mutations.length)] + text.slice(at);
  const lines = text.split('\n');
  const l = Math.floor(rand() * lines.length);
  lines[l] = rand() < 0.5 ? ` ${lines[l]}` : lines[l]!.replace(/^ /, '');
  return lines.join('\n');
}

test(`${cases} generated documents: read alike, or given up (seed ${seed})`, () => {
  const rand = prng(seed);
  let readCount = 0;
  for (let i = 0; i < cases; i++) {
    let text = generate(rand, i % 4 === 0);
    if (i % 2 === 1) text = mutate(text, rand);
    if (agrees(text, `case ${i} (seed ${seed})`)) readCount++;
  }
  // The reader must take a fair share of them for this test to prove anything.
  if (process.env.MANIFEST_YAML_VERBOSE) console.log(`read ${readCount} of ${cases}`);
  assert.ok(readCount > cases / 10, `only ${readCount} of ${cases} were read`);
});
