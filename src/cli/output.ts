// Printing for the CLI: objects as YAML or JSON (one object as itself, several as a v1 List, as
// kubectl -o does), load/validation failures as kubectl prints them (exit code 2), and warnings.

import type { Pod } from '../api/types.js';
import { qualifiedName, type ManifestObject } from '../config/object-kinds.js';
import { runtimeObjectWarnings, type PodCapabilities } from '../runtime/pod-rules.js';
import { detectRuntimeHost } from '../runtime/process-runtime.js';
import { loadErrorLines } from '../config/load.js';
import { formatObject } from '../printers/json-yaml.js';

export type OutputFormat = 'yaml' | 'json';
export const outputFormats: readonly OutputFormat[] = ['yaml', 'json'];

/** One object → itself; several → `{apiVersion: v1, kind: List, items, metadata: {resourceVersion: ""}}`. */
export function asListOrSingle(objects: readonly object[]): object {
  if (objects.length === 1) return objects[0]!;
  return { apiVersion: 'v1', items: objects, kind: 'List', metadata: { resourceVersion: '' } };
}

/** Through the one serializer `run` and `up` print with (printers/json-yaml.ts). */
export function formatObjects(objects: readonly object[], format: OutputFormat): string {
  return formatObject(asListOrSingle(objects), format);
}

/** Writes the error (every problem of a ManifestError) to stderr; returns exit code 2. */
export function reportLoadError(err: unknown, stderr: NodeJS.WritableStream): number {
  for (const line of loadErrorLines(err)) stderr.write(`${line}\n`);
  return 2;
}

/**
 * Validation warnings (stderr, as kubectl prints the API server's) for the fields of each Pod and
 * workload template that a runtime of these capabilities runs without applying on this host:
 * `Warning: deployment.apps/web: spec.template.spec.containers[0].securityContext.capabilities: not honoured …`.
 */
export function warnUnhonoured(objects: ReadonlyArray<Pod | ManifestObject>, capabilities: PodCapabilities, stderr: NodeJS.WritableStream): void {
  if (typeof capabilities !== 'function' && !capabilities.hostProcesses) return;
  // Host detection (cgroups, identity) only for a runtime of host processes.
  const warnings = runtimeObjectWarnings(capabilities, detectRuntimeHost());
  for (const o of objects) {
    const obj = { apiVersion: 'v1', kind: 'Pod', ...o } as ManifestObject | Pod;
    for (const w of warnings(obj)) stderr.write(`Warning: ${qualifiedName(obj)}: ${w}\n`);
  }
}
