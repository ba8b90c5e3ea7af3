// Shared pieces of the runtime tests: temporary root dirs, sandbox/container configs, waiting for a
// condition (the shared waitFor), and checking whether a host process still exists.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContainerConfig, PodSandboxConfig } from '../../src/runtime/cri.js';
import { waitFor } from '../fixtures/wait.js';

export function tempDir(prefix = 'podvisor-rt-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function sandboxConfig(rootDir: string, name = 'web', uid = `uid-${name}`): PodSandboxConfig {
  return {
    metadata: { name, namespace: 'default', uid, attempt: 0 },
    hostname: name,
    logDirectory: join(rootDir, 'pods', `default_${name}_${uid}`),
    labels: {},
    annotations: {},
    portMappings: [],
  };
}

export function containerConfig(command: string[], over: Partial<ContainerConfig> = {}): ContainerConfig {
  const name = over.metadata?.name ?? 'app';
  const attempt = over.metadata?.attempt ?? 0;
  return {
    metadata: { name, attempt },
    image: 'busybox',
    command,
    args: [],
    workingDir: '',
    envs: [],
    logPath: `${name}/${attempt}.log`,
    labels: {},
    annotations: {},
    ...over,
  };
}

export { waitFor };

/** True while the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export async function readPid(file: string): Promise<number> {
  const text = await waitFor(`pid in ${file}`, () => {
    try {
      const t = readFileSync(file, 'utf8').trim();
      return t.length > 0 ? t : undefined;
    } catch {
      return undefined;
    }
  });
  return Number(text);
}
