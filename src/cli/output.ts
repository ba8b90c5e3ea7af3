// Printing for the CLI: objects as YAML or JSON (one object as itself, several as a v1 List, as
// kubectl -o does), load/validation failures as kubectl prints them (exit code 2), and warnings.

import type { Pod } from '../api/types.js';
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

/** Validation warnings (stderr, as kubectl prints the API server's) for fields the process runtime cannot honour here. */
export async function warnUnhonoured(pods: Pod[], stderr: NodeJS.WritableStream): Promise<void> {
  // Host detection (cgroups, identity) is loaded only for the process runtime's warnings.
  const { detectRuntimeHost, unhonouredWarnings } = await import('../runtime/process-runtime.js');
  const host = detectRuntimeHost();
  for (const pod of pods) for (const w of unhonouredWarnings(pod, host)) stderr.write(`Warning: ${w}\n`);
}
