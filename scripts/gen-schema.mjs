#!/usr/bin/env node
// Generates src/api/schema.generated.json — every field of the v1 types podvisor decodes (Pod,
// ConfigMap, Secret, the apps/v1 and batch/v1 workloads, PersistentVolumes, their claims and StorageClasses and what they reach) — from Kubernetes' own definitions in kubernetes-types,
// read with the TypeScript compiler API. `--check` compares instead of writing (exit 1 if stale).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const typesDir = dirname(require.resolve('kubernetes-types/package.json'));
const outFile = join(root, 'src/api/schema.generated.json');

/** Modules read, by the key used in type names (`core/v1.Pod`). */
const modules = ['core/v1', 'meta/v1', 'api/resource', 'apps/v1', 'batch/v1', 'discovery/v1', 'storage/v1', 'runtime'];
const roots = [
  'core/v1.Pod',
  'core/v1.ConfigMap',
  'core/v1.Secret',
  'core/v1.Service',
  'core/v1.Endpoints',
  'discovery/v1.EndpointSlice',
  'apps/v1.Deployment',
  'apps/v1.ReplicaSet',
  'apps/v1.StatefulSet',
  'apps/v1.DaemonSet',
  'apps/v1.ControllerRevision',
  'batch/v1.Job',
  'batch/v1.CronJob',
  'core/v1.PersistentVolume',
  'core/v1.PersistentVolumeClaim',
  'storage/v1.StorageClass',
];

/** Scalar aliases with a meaning of their own. */
const specialAliases = { 'api/resource.Quantity': { type: 'quantity' } };

function readModule(key) {
  const file = join(typesDir, `${key}.d.ts`);
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const interfaces = new Map();
  const aliases = new Map();
  const imports = new Map();
  for (const st of sf.statements) {
    if (ts.isInterfaceDeclaration(st)) interfaces.set(st.name.text, st);
    else if (ts.isTypeAliasDeclaration(st)) aliases.set(st.name.text, st);
    else if (ts.isImportDeclaration(st) && st.importClause?.namedBindings && ts.isNamedImports(st.importClause.namedBindings)) {
      const from = st.moduleSpecifier.text.replace(/^\.\.\//, '');
      for (const el of st.importClause.namedBindings.elements) imports.set(el.name.text, from);
    }
  }
  return { key, interfaces, aliases, imports };
}

/**
 * Builds the schema reachable from roots. Each type → { fields: { name: FieldType } } where a
 * FieldType is {type: string|integer|boolean|intOrString|quantity|any} | {type: object, ref} |
 * {type: array, items} | {type: map, values}, with `required: true` for non-optional fields.
 */
export function generateSchema() {
  const mods = new Map(modules.map((k) => [k, readModule(k)]));
  const types = {};
  const queue = [...roots];

  function resolveName(mod, name) {
    if (mod.interfaces.has(name) || mod.aliases.has(name)) return `${mod.key}.${name}`;
    const from = mod.imports.get(name);
    if (!from) throw new Error(`${mod.key}: cannot resolve type ${name}`);
    return `${from}.${name}`;
  }

  function typeOf(mod, node) {
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: 'string' };
      case ts.SyntaxKind.NumberKeyword:
        return { type: 'integer' };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: 'boolean' };
      case ts.SyntaxKind.LiteralType:
        if (ts.isStringLiteral(node.literal)) return { type: 'string' };
        break;
      case ts.SyntaxKind.ArrayType:
        return { type: 'array', items: typeOf(mod, node.elementType) };
      case ts.SyntaxKind.UnionType: {
        const kinds = new Set(node.types.map((t) => typeOf(mod, t).type));
        if (kinds.size === 2 && kinds.has('integer') && kinds.has('string')) return { type: 'intOrString' };
        if (kinds.size === 1) return typeOf(mod, node.types[0]);
        break;
      }
      case ts.SyntaxKind.TypeLiteral: {
        const index = node.members.find(ts.isIndexSignatureDeclaration);
        if (index && node.members.length === 1) return { type: 'map', values: typeOf(mod, index.type) };
        break;
      }
      case ts.SyntaxKind.TypeReference: {
        const name = node.typeName.getText();
        if (name === 'Array' && node.typeArguments?.length === 1) return { type: 'array', items: typeOf(mod, node.typeArguments[0]) };
        const full = resolveName(mod, name);
        if (specialAliases[full]) return specialAliases[full];
        const [mkey, tname] = [full.slice(0, full.lastIndexOf('.')), full.slice(full.lastIndexOf('.') + 1)];
        const target = mods.get(mkey);
        if (!target) throw new Error(`module ${mkey} not read (needed for ${full})`);
        const alias = target.aliases.get(tname);
        if (alias) return typeOf(target, alias.type);
        if (!target.interfaces.has(tname)) throw new Error(`unknown type ${full}`);
        if (target.interfaces.get(tname).members.length === 0) return { type: 'any' };
        if (!types[full] && !queue.includes(full)) queue.push(full);
        return { type: 'object', ref: full };
      }
    }
    throw new Error(`${mod.key}: unsupported type syntax: ${node.getText()}`);
  }

  while (queue.length) {
    const full = queue.shift();
    if (types[full]) continue;
    const mkey = full.slice(0, full.lastIndexOf('.'));
    const tname = full.slice(full.lastIndexOf('.') + 1);
    const mod = mods.get(mkey);
    const decl = mod.interfaces.get(tname);
    const fields = {};
    types[full] = { fields };
    for (const m of decl.members) {
      if (!ts.isPropertySignature(m)) continue;
      const ft = typeOf(mod, m.type);
      fields[m.name.getText().replace(/^"|"$/g, '')] = m.questionToken ? ft : { ...ft, required: true };
    }
  }
  const sorted = Object.fromEntries(
    Object.keys(types)
      .sort()
      .map((k) => [k, types[k]]),
  );
  const pkg = JSON.parse(readFileSync(join(typesDir, 'package.json'), 'utf8'));
  return { source: `kubernetes-types ${pkg.version}`, roots, types: sorted };
}

export function renderSchema() {
  return JSON.stringify(generateSchema(), null, 1) + '\n';
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = renderSchema();
  if (process.argv.includes('--check')) {
    const current = readFileSync(outFile, 'utf8');
    if (current !== text) {
      console.error(`${outFile} is out of date; run node scripts/gen-schema.mjs`);
      process.exit(1);
    }
  } else {
    writeFileSync(outFile, text);
    console.log(`wrote ${outFile} (${Object.keys(JSON.parse(text).types).length} types)`);
  }
}
