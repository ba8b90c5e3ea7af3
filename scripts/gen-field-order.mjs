#!/usr/bin/env node
// Generates src/api/field-order.generated.json — the order in which the API server writes the fields
// of Pod, ConfigMap, Secret, Event and List (and of every struct they reach): Go's encoding/json
// writes struct fields in declaration order, embedded structs' fields in place. Read from the Go
// sources of k8s.io/api and k8s.io/apimachinery:
//   node scripts/gen-field-order.mjs <k8s.io/api>/core/v1/types.go <k8s.io/apimachinery>/pkg/apis/meta/v1/types.go
// `--check` compares instead of writing (exit 1 if stale).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outFile = join(root, 'src/api/field-order.generated.json');
const args = process.argv.slice(2);
const check = args.includes('--check');
const [coreFile, metaFile] = args.filter((a) => a !== '--check');
if (!coreFile || !metaFile) {
  console.error('usage: gen-field-order.mjs [--check] CORE_V1_TYPES_GO META_V1_TYPES_GO');
  process.exit(2);
}

const roots = ['core/v1.Pod', 'core/v1.ConfigMap', 'core/v1.Secret', 'core/v1.Event', 'core/v1.List'];
/** Go package qualifiers as the files import them. */
const packages = { metav1: 'meta/v1', v1: 'core/v1' };

/** Struct fields in declaration order: { name?, type, json } per field; aliases `type A pkg.B`. */
function parseGo(file, key) {
  const src = readFileSync(file, 'utf8');
  const structs = new Map();
  const lines = src.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const alias = /^type (\w+) (?:(\w+)\.)?(\w+)\s*$/.exec(lines[i]);
    if (alias) {
      structs.set(`${key}.${alias[1]}`, { alias: `${alias[2] ? packages[alias[2]] : key}.${alias[3]}` });
      continue;
    }
    const head = /^type (\w+) struct \{\s*$/.exec(lines[i]);
    if (!head) continue;
    const fields = [];
    for (i++; i < lines.length && lines[i] !== '}'; i++) {
      const line = lines[i].replace(/^\s+/, '');
      if (line === '' || line.startsWith('//')) continue;
      const m = /^(?:(\w+)\s+)?([\w.*[\]]+)\s+`([^`]*)`/.exec(line);
      if (!m) continue;
      const json = /json:"([^"]*)"/.exec(m[3])?.[1] ?? '';
      fields.push({ name: m[1], type: m[2], json: json.split(',')[0] });
    }
    structs.set(`${key}.${head[1]}`, { fields });
  }
  return structs;
}

const structs = new Map([...parseGo(coreFile, 'core/v1'), ...parseGo(metaFile, 'meta/v1')]);

/** The struct a Go type names (through pointers, slices and map values), or undefined for a scalar. */
function refOf(type, key) {
  const isMap = type.startsWith('map[');
  const base = type.replace(/^(\*|\[\]|map\[[^\]]*\])+/, '');
  const dot = base.indexOf('.');
  const name = dot < 0 ? `${key}.${base}` : `${packages[base.slice(0, dot)] ?? '?'}.${base.slice(dot + 1)}`;
  let s = structs.get(name);
  let resolved = name;
  while (s?.alias) s = structs.get((resolved = s.alias));
  return s?.fields ? { ref: resolved, isMap } : isMap ? { isMap } : undefined;
}

/** The JSON field list of a struct: [name] for a scalar, [name, ref] for a struct, [name, ref|null, 'map'] for a map. */
function jsonFields(typeName) {
  let s = structs.get(typeName);
  let resolved = typeName;
  while (s?.alias) s = structs.get((resolved = s.alias));
  if (!s?.fields) throw new Error(`no struct ${typeName}`);
  const key = resolved.slice(0, resolved.indexOf('.'));
  const out = [];
  for (const f of s.fields) {
    if (f.json === '-') continue;
    const r = refOf(f.type, key);
    if (f.name === undefined && f.json === '') {
      // An embedded struct without a JSON name: its fields are written in its place.
      if (!r?.ref) throw new Error(`${typeName}: cannot inline ${f.type}`);
      out.push(...jsonFields(r.ref));
      continue;
    }
    const name = f.json || f.name || f.type.replace(/^.*\./, '');
    out.push(r?.isMap ? [name, r.ref ?? null, 'map'] : r?.ref ? [name, r.ref] : [name]);
  }
  return out;
}

const types = {};
const queue = [...roots];
while (queue.length) {
  const t = queue.shift();
  if (types[t]) continue;
  types[t] = jsonFields(t);
  for (const f of types[t]) if (f[1] && !types[f[1]]) queue.push(f[1]);
}
const sorted = Object.fromEntries(
  Object.keys(types)
    .sort()
    .map((k) => [k, types[k]]),
);
const text = `${JSON.stringify({ source: 'k8s.io/api core/v1, k8s.io/apimachinery meta/v1 (Go struct field order)', roots, types: sorted })}\n`;
if (check) {
  const old = readFileSync(outFile, 'utf8');
  if (old !== text) {
    console.error(`${outFile} is stale: run scripts/gen-field-order.mjs`);
    process.exit(1);
  }
} else {
  writeFileSync(outFile, text);
  console.log(`wrote ${outFile}: ${Object.keys(sorted).length} types`);
}
