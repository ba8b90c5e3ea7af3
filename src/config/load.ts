// loadManifests: the one call the CLI commands use to turn -f sources into defaulted, validated
// v1 Pods (plus the ConfigMaps and Secrets they may reference, Services, and the workloads the
// agent's controllers run), collecting every problem of every source before failing, so a user sees
// all of them at once.

import type { ConfigMap, ObjectMeta, Pod, Secret } from '../api/types.js';
import { onPodOrTemplate } from '../api/pod-templates.js';
import { strictDecode, type DecodeProblem } from '../api/decode.js';
import { kindTypes } from '../api/schema.js';
import { defaultPod, defaultSecret, defaultNamespace } from '../api/defaults.js';
import { aggregateMessage, type FieldError, formatFieldError, sortFieldErrors } from '../api/field-errors.js';
import { validateConfigMap, validatePod, validateSecret } from '../api/validation/index.js';
import { readSources } from './sources.js';
import { describeDocument, expandList, parseSource, type ManifestDocument } from './documents.js';
import { goQuote } from '../util/go-format.js';
import { builtin } from '../util/builtins.js';
import { isObjectKind, objectKinds, schemaTypeOf, qualifiedName, removedVersions, type ManifestObject, type ObjectKind } from './object-kinds.js';

/** kubectl's --validate values: strict rejects unknown fields, warn reports them, ignore drops them. */
export type ValidateMode = 'strict' | 'warn' | 'ignore';
export const validateModes: readonly ValidateMode[] = ['strict', 'warn', 'ignore'];

export interface LoadOptions {
  /** Opened only when a source is `-` (the first touch of process.stdin builds its stream). */
  stdin?: () => NodeJS.ReadableStream;
  /** Base for relative paths; defaults to process.cwd(). */
  cwd?: string;
  /** Default strict. */
  validate?: ValidateMode;
  /** Receives each warning (without a `Warning: ` prefix): unknown fields in warn mode, objects defined twice. */
  onWarning?: (msg: string) => void;
  /** This host's node name; defaults to the lowercased hostname, as the kubelet's. */
  nodeName?: string;
  /**
   * Further per-pod checks (run on the defaulted pod, and on each workload's pod template under its
   * path; e.g. the rules of the runtime the pods will run on), reported like validation errors.
   */
  extraValidation?: (pod: Pod) => FieldError[];
  /** kubectl's -n: the namespace of objects that name none; objects naming another are an error. */
  namespace?: string;
  /** Accept sources that hold no objects at all (otherwise an error). */
  allowEmpty?: boolean;
  /** Read directories' subdirectories too (kubectl's -R). */
  recursive?: boolean;
}

/** Where a loaded object came from. */
export interface ManifestOrigin {
  /** The source name as given (`examples/web.yaml`, `dir/a.yaml`, `STDIN`). */
  file: string;
  /** Absolute path, when read from a file. */
  path?: string;
  /** `document 0` or `document 0, items[2]`. */
  document: string;
}

export interface LoadedManifests {
  /** Defaulted and validated pods, in input order. */
  pods: Pod[];
  /** ConfigMaps in input order (namespace defaulted). */
  configMaps: ConfigMap[];
  /** Secrets in input order: namespace and type defaulted, stringData merged into base64 data. */
  secrets: Secret[];
  /** Origin of each pod, parallel to pods. */
  podOrigins: ManifestOrigin[];
  /** Each pod as written (decoded, not defaulted), parallel to pods: what a client sends an API server. */
  podManifests: Pod[];
  /** Services and workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs), defaulted, in input order. */
  objects: ManifestObject[];
  /** Each of objects as written (decoded, namespace set, not defaulted), parallel to objects. */
  objectManifests: ManifestObject[];
  configMap(namespace: string, name: string): ConfigMap | undefined;
  secret(namespace: string, name: string): Secret | undefined;
}

/** Every problem found while loading; `problems` are printed one after another, as kubectl does. */
export class ManifestError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ManifestError';
    this.problems = problems;
  }
}

/** A Secret's values, base64-decoded. */
export function secretBytes(secret: Secret): Map<string, Buffer> {
  return new Map(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

/** kubectl's form: `The Pod "web" is invalid: <err>` or, for several, one `* <err>` line each. */
export function formatInvalidObject(kind: string, name: string, errors: readonly FieldError[]): string {
  const lines = sortFieldErrors(errors).map(formatFieldError);
  const head = `The ${kind} ${goQuote(name)} is invalid: `;
  return lines.length === 1 ? `${head}${lines[0]}` : `${head}\n${lines.map((l) => `* ${l}`).join('\n')}`;
}

const kindHints: Record<string, string> = {
  PodTemplate: 'podvisor runs Pods; use its template',
};
/** `a`, `a and b`, `a, b and c`. */
function joinAnd(words: readonly string[]): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** The kinds a manifest may hold, by the version each is stored at, in one sentence (read off objectKinds, so a kind added there is named here). */
export function readableKinds(): string {
  const byVersion = new Map<string, string[]>([['v1', ['Pod', 'ConfigMap', 'Secret']]]);
  for (const [kind, r] of Object.entries(objectKinds)) {
    const v = r.apiVersions[0]!;
    byVersion.set(v, [...(byVersion.get(v) ?? []), kind]);
  }
  const groups = [...byVersion].map(([v, kinds]) => `${v} ${joinAnd(kinds)}`);
  return `podvisor reads ${groups.slice(0, -1).join(', ')}, and ${groups.at(-1)} objects (or a v1 List of them)`;
}
const listKinds = new Set(['List', 'PodList', 'ConfigMapList', 'SecretList']);

/** Why a version is not read, when Kubernetes removed it: ` (batch/v1beta1 CronJob was removed in Kubernetes 1.25; set apiVersion: batch/v1)`. */
function removedHint(kind: ObjectKind, apiVersion: string, versions: readonly string[]): string {
  const removed = Object.hasOwn(removedVersions, kind) ? removedVersions[kind]! : {};
  const release = Object.hasOwn(removed, apiVersion) ? removed[apiVersion] : undefined;
  return release ? ` (${apiVersion} ${kind} was removed in Kubernetes ${release}; set apiVersion: ${versions[0]})` : '';
}

export function defaultNodeName(): string {
  return builtin('node:os').hostname().trim().toLowerCase();
}

interface Collected {
  kind: 'Pod' | 'ConfigMap' | 'Secret' | ObjectKind;
  value: Record<string, unknown>;
  doc: ManifestDocument;
}

/** Loads, decodes, defaults and validates; throws ManifestError with every problem found. */
export async function loadManifests(sources: readonly string[], opts: LoadOptions = {}): Promise<LoadedManifests> {
  try {
    return await load(sources, opts);
  } catch (err) {
    if (err instanceof ManifestError) throw err;
    // Never an internal exception's text: say what failed, not how the code failed.
    throw new ManifestError([`error: the manifests could not be loaded (${err instanceof Error ? err.name : 'failure'})`]);
  }
}

async function load(sources: readonly string[], opts: LoadOptions): Promise<LoadedManifests> {
  const mode = opts.validate ?? 'strict';
  const nodeName = opts.nodeName ?? defaultNodeName();
  const problems: string[] = [];
  const read = await readSources(sources, { ...opts, recursive: opts.recursive === true });
  problems.push(...read.errors);

  const docs: ManifestDocument[] = [];
  for (const file of read.files) {
    const parsed = parseSource(file);
    problems.push(...parsed.errors);
    docs.push(...parsed.documents);
  }

  const reportDecodeProblems = (doc: ManifestDocument, unknown: DecodeProblem[], typeErrors: DecodeProblem[]) => {
    for (const p of typeErrors) problems.push(`error: ${doc.locate(p.segments)}: ${p.message}`);
    for (const p of unknown) {
      const text = `${doc.locate(p.segments, true)}: ${p.message}`;
      if (mode === 'strict') problems.push(`error: ${text}`);
      else if (mode === 'warn') opts.onWarning?.(text);
    }
  };

  const pods: Pod[] = [];
  const podOrigins: ManifestOrigin[] = [];
  const podManifests: Pod[] = [];
  const configMaps: ConfigMap[] = [];
  const secrets: Secret[] = [];
  const objects: ManifestObject[] = [];
  const objectManifests: ManifestObject[] = [];
  // Decoded as soon as classified, so problems are reported in input order.
  const take = (c: Collected) => {
    const decoded = strictDecode<Record<string, unknown>>(c.value, isObjectKind(c.kind) ? schemaTypeOf(c.kind, String(c.value.apiVersion)) : kindTypes[c.kind]);
    reportDecodeProblems(c.doc, decoded.unknownFields, decoded.typeErrors);
    if (decoded.typeErrors.length) return;
    const clusterScoped = isObjectKind(c.kind) && !objectKinds[c.kind].namespaced;
    if (opts.namespace && !clusterScoped) {
      const meta = (decoded.value.metadata ??= {}) as { namespace?: string };
      if (meta.namespace && meta.namespace !== opts.namespace) {
        problems.push(
          `error: ${c.doc.locate(['metadata', 'namespace'])}: the namespace from the provided object ${goQuote(meta.namespace)} does not match the namespace ${goQuote(opts.namespace)}. You must pass '--namespace=${meta.namespace}' to perform this operation.`,
        );
        return;
      }
      meta.namespace = opts.namespace;
    }
    const origin: ManifestOrigin = { file: c.doc.file.name, document: describeDocument(c.doc) };
    if (c.doc.file.path) origin.path = c.doc.file.path;
    if (c.kind === 'Pod') {
      podManifests.push(structuredClone(decoded.value) as Pod);
      pods.push(defaultPod(decoded.value as Pod, { nodeName, source: 'file', ...(origin.path ? { path: origin.path } : {}) }));
      podOrigins.push(origin);
    } else if (isObjectKind(c.kind)) {
      const obj = decoded.value as unknown as ManifestObject;
      if (clusterScoped) delete (obj.metadata ??= {}).namespace;
      else (obj.metadata ??= {}).namespace ||= defaultNamespace;
      objectManifests.push(structuredClone(obj));
      objects.push(objectKinds[c.kind].defaults(obj));
    } else if (c.kind === 'ConfigMap') {
      const cm = decoded.value as ConfigMap;
      cm.metadata ??= {};
      cm.metadata.namespace ||= defaultNamespace;
      configMaps.push(cm);
    } else {
      secrets.push(defaultSecret(decoded.value as Secret));
    }
  };
  const classify = (doc: ManifestDocument, inList: boolean) => {
    // kubectl's words for a document it cannot map to a kind: `unable to recognize "<file>": …`.
    // Located only when reported: locating may need a parse that keeps positions.
    const where = () => `unable to recognize ${goQuote(doc.file.name)}: ${doc.locate([])}: ${describeDocument(doc)}`;
    const v = doc.value;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      problems.push(`error: ${where()}: expected an object with apiVersion and kind`);
      return;
    }
    const obj = v as Record<string, unknown>;
    const { apiVersion, kind } = obj;
    // kubectl's checks of each (its validation's getObjectKind): not set, or not a string.
    const typeMetaProblems = (['apiVersion', 'kind'] as const).flatMap((field) => {
      const v = obj[field];
      if (v === undefined || v === null || v === '') return [`${field} not set`];
      return typeof v === 'string' ? [] : [`${field} isn't string type`];
    });
    if (typeMetaProblems.length || typeof kind !== 'string' || typeof apiVersion !== 'string') {
      problems.push(`error: ${where()}: ${typeMetaProblems.join(', ')}`);
      return;
    }
    const name = typeof (obj.metadata as { name?: unknown } | undefined)?.name === 'string' ? ` ${goQuote((obj.metadata as { name: string }).name)}` : '';
    if (kind === 'Pod' || kind === 'ConfigMap' || kind === 'Secret' || (listKinds.has(kind) && !inList)) {
      if (apiVersion !== 'v1') {
        problems.push(`error: ${where()}: no matches for kind ${goQuote(kind)} in version ${goQuote(apiVersion)}: podvisor reads v1 objects`);
        return;
      }
      if (listKinds.has(kind)) {
        const listed = strictDecode(obj, kindTypes.List);
        reportDecodeProblems(doc, listed.unknownFields, listed.typeErrors);
        for (const item of expandList(doc)) classify(item, true);
        return;
      }
      take({ kind: kind as Collected['kind'], value: obj, doc });
      return;
    }
    if (isObjectKind(kind)) {
      const versions = objectKinds[kind].apiVersions;
      if (!versions.includes(apiVersion)) {
        problems.push(
          `error: ${where()}: no matches for kind ${goQuote(kind)} in version ${goQuote(apiVersion)}: podvisor reads ${kind} in ${versions.join(', ')}${removedHint(kind, apiVersion, versions)}`,
        );
        return;
      }
      take({ kind, value: obj, doc });
      return;
    }
    const hint = Object.hasOwn(kindHints, kind) ? kindHints[kind] : readableKinds();
    problems.push(`error: ${where()}: ${apiVersion} ${kind}${name} is not supported: ${hint}`);
  };

  for (const doc of docs) {
    try {
      classify(doc, false);
    } catch {
      // Never an internal exception's text: the document and where it is.
      problems.push(`error: ${doc.locate([])}: ${describeDocument(doc)}: cannot be read as a Kubernetes object`);
    }
  }

  // Validation: every pod's errors (and the runtime's own rules) reported together.
  pods.forEach((pod) => {
    const errs = [...validatePod(pod)];
    if (opts.extraValidation) errs.push(...opts.extraValidation(pod));
    if (errs.length) problems.push(formatInvalidObject('Pod', pod.metadata?.name ?? '', errs));
  });
  // A pod named twice is the last one (a pod runs one spec; apply would replace the first with it).
  const lastOfName = new Map<string, number>();
  pods.forEach((pod, i) => pod.metadata?.name && lastOfName.set(`${pod.metadata.namespace}/${pod.metadata.name}`, i));
  const shadowed = new Set(pods.flatMap((pod, i) => (pod.metadata?.name && lastOfName.get(`${pod.metadata.namespace}/${pod.metadata.name}`) !== i ? [i] : [])));
  for (const i of shadowed) opts.onWarning?.(`pod/${pods[i]!.metadata!.name} is defined more than once: the last one is used`);
  if (shadowed.size) {
    for (const list of [pods, podOrigins, podManifests] as unknown[][]) {
      const kept = list.filter((_, i) => !shadowed.has(i));
      list.splice(0, list.length, ...kept);
    }
  }
  // Two documents of one kind and name are applied in order, as kubectl apply -f DIR does (the
  // last one wins): said, not refused.
  const seen = new Map<string, number>();
  const templateChecks = opts.extraValidation ? onPodOrTemplate(opts.extraValidation) : () => [];
  const checkOther = (kind: string, obj: { metadata?: ObjectMeta }, errs: FieldError[]) => {
    const meta = obj.metadata;
    const key = `${kind}/${meta?.namespace}/${meta?.name}`;
    if (meta?.name) {
      const times = (seen.get(key) ?? 0) + 1;
      seen.set(key, times);
      if (times === 2)
        opts.onWarning?.(`${qualifiedName({ apiVersion: 'v1', kind, ...obj })} is defined more than once: each is applied in turn, the last one wins`);
    }
    if (errs.length) problems.push(formatInvalidObject(kind, meta?.name ?? '', errs));
  };
  for (const cm of configMaps) checkOther('ConfigMap', cm, validateConfigMap(asCreated(cm)));
  for (const s of secrets) checkOther('Secret', s, validateSecret(asCreated(s)));
  for (const o of objects) checkOther(o.kind, o, [...objectKinds[o.kind].validate(asCreated(o)), ...templateChecks(o)]);

  if (problems.length === 0 && !opts.allowEmpty && pods.length + configMaps.length + secrets.length + objects.length === 0) {
    problems.push('error: no objects passed');
  }
  if (problems.length) throw new ManifestError(problems);

  const byKey = <T extends { metadata?: { namespace?: string; name?: string } }>(items: T[]) =>
    new Map(items.map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o]));
  const cmIndex = byKey(configMaps);
  const secretIndex = byKey(secrets);
  return {
    pods,
    configMaps,
    secrets,
    podOrigins,
    podManifests,
    objects,
    objectManifests,
    configMap: (ns, name) => cmIndex.get(`${ns}/${name}`),
    secret: (ns, name) => secretIndex.get(`${ns}/${name}`),
  };
}

/**
 * The object as the API server validates it on create: a name made from generateName where it has
 * none (the server names it before validation), so a manifest for `kubectl create` is judged as
 * the server judges it.
 */
function asCreated<T extends { metadata?: ObjectMeta }>(obj: T): T {
  const m = obj.metadata;
  if (m?.name || !m?.generateName) return obj;
  return { ...obj, metadata: { ...m, name: `${m.generateName}${generatedSuffix}` } };
}
const generatedSuffix = 'x0x0x';

/** The message of any error thrown while loading, as lines for stderr. */
export function loadErrorLines(err: unknown): string[] {
  if (err instanceof ManifestError) return err.problems;
  if (err instanceof Error) return [`error: ${err.message}`];
  return [`error: ${aggregateMessage([String(err)])}`];
}
