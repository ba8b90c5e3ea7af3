// Generates a scenario's Pod manifests into a fresh temporary directory, one file per pod as in a
// static-pod directory, so the agent reads them through the project's own loader.

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, Pod, Probe } from '../../src/api/types.js';

/** The container every scenario runs: cheap, silent, and alive longer than any run. */
export const SLEEP_COMMAND = ['sleep', '900'];

/** Path of a pod's health endpoint on the benchmark server; the key is the pod's name. */
export function healthPath(key: string): string {
  return `/pods/${key}/healthz`;
}

export interface PodShape {
  /** The container's command (SLEEP_COMMAND when unset). */
  command?: readonly string[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  terminationGracePeriodSeconds?: number;
}

/** Pod names are `<prefix>-<index>`, zero-padded so directory order is index order. */
export function podName(prefix: string, i: number): string {
  return `${prefix}-${String(i).padStart(4, '0')}`;
}

export function benchPod(name: string, shape: PodShape): Pod {
  const container: Container = { name: 'main', image: 'busybox:1.36', command: [...(shape.command ?? SLEEP_COMMAND)] };
  if (shape.livenessProbe) container.livenessProbe = shape.livenessProbe;
  if (shape.readinessProbe) container.readinessProbe = shape.readinessProbe;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'podvisor-bench' } },
    spec: {
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: shape.terminationGracePeriodSeconds ?? 2,
      containers: [container],
    },
  };
}

export interface BenchWorkspace {
  /** The workspace's own directory (manifests, root dir, and room for a scenario's sockets). */
  base: string;
  /** Directory holding one `<name>.json` manifest per pod. */
  manifestDir: string;
  /** Root directory for the agent's sandboxes and logs. */
  rootDir: string;
  names: string[];
  remove(): void;
}

/** Writes count pods shaped by shape(name, i) and returns where they are. */
export function writeWorkspace(prefix: string, count: number, shape: (name: string, i: number) => PodShape): BenchWorkspace {
  const base = mkdtempSync(join(tmpdir(), `podvisor-bench-${prefix}-`));
  const manifestDir = join(base, 'manifests');
  const rootDir = join(base, 'root');
  mkdirSync(manifestDir);
  mkdirSync(rootDir);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = podName(prefix, i);
    names.push(name);
    // JSON is valid YAML and the cheapest for the loader to parse.
    writeFileSync(join(manifestDir, `${name}.json`), JSON.stringify(benchPod(name, shape(name, i)), null, 2));
  }
  return { base, manifestDir, rootDir, names, remove: () => rmSync(base, { recursive: true, force: true }) };
}
