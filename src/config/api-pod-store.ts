// Pods applied through the API, persisted in the root dir so an agent restart restores them: one
// file per pod (`<root>/api-pods/<uid>.json`, 0600), replaced atomically (write, fsync, rename) and
// named by the UID the agent generated (checked again before it becomes a path).

import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import { syncDir, writeFileAtomic } from '../util/atomic-write.js';

const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class APIPodStore {
  readonly dir: string;

  constructor(rootDir: string) {
    this.dir = join(rootDir, 'api-pods');
  }

  private path(pod: Pod): string {
    const uid = pod.metadata?.uid ?? '';
    if (!UID.test(uid)) throw new Error(`refusing to persist a pod whose uid ${JSON.stringify(uid)} is not one the agent generated`);
    return join(this.dir, `${uid}.json`);
  }

  async save(pod: Pod): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.path(pod), JSON.stringify(pod), 0o600);
  }

  async remove(pod: Pod): Promise<void> {
    try {
      await unlink(this.path(pod));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    await syncDir(this.dir);
  }

  /** Every stored pod, oldest first; unreadable files are reported and skipped. */
  async load(onError: (file: string, err: string) => void): Promise<Pod[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => n.endsWith('.json') && UID.test(n.slice(0, -5)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const pods: Pod[] = [];
    for (const n of names) {
      try {
        const pod = JSON.parse(await readFile(join(this.dir, n), 'utf8')) as Pod;
        if (pod.metadata?.uid !== n.slice(0, -5)) throw new Error('uid does not match the file name');
        pods.push(pod);
      } catch (err) {
        onError(join(this.dir, n), (err as Error).message);
      }
    }
    return pods.sort((a, b) => String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')));
  }
}
