// The files of a configMap, secret, downwardAPI or projected volume, written so that a container that
// has the volume mounted sees each update whole, as the kubelet's AtomicWriter
// (pkg/volume/util/atomic_writer.go): the payload goes into a fresh `..<timestamp>` directory, the
// `..data` symlink is swapped to it by a rename, each top-level path is a symlink through `..data`,
// and the previous directory is removed.

import { chmod, lstat, mkdir, mkdtemp, readdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

export interface PayloadFile {
  /** Relative to the volume, checked to stay inside it. */
  path: string;
  data: Buffer;
  mode: number;
}

const DATA_DIR = '..data';
const DATA_DIR_TMP = '..data_tmp';

/** The `..2006_01_02_15_04_05.` prefix of a payload directory (mkdtemp adds the random part). */
function timestampPrefix(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `..${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}.`;
}

/** The first component of each path: what gets a symlink at the top of the volume. */
function topLevelNames(files: PayloadFile[]): Set<string> {
  return new Set(files.map((f) => f.path.split('/').filter(Boolean)[0]!));
}

/**
 * Writes the payload into dir (created when absent) and swaps it in; a volume set up earlier with
 * plain files is converted. `now` names the payload directory.
 */
export async function writePayload(dir: string, files: PayloadFile[], now: Date): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const tsDir = await mkdtemp(join(dir, timestampPrefix(now)));
  await chmod(tsDir, 0o755);
  for (const f of files) {
    const target = join(tsDir, f.path);
    await mkdir(join(target, '..'), { recursive: true, mode: 0o755 });
    await writeFile(target, f.data);
    await chmod(target, f.mode & 0o7777);
  }

  const tmpLink = join(dir, DATA_DIR_TMP);
  await rm(tmpLink, { force: true });
  await symlink(basename(tsDir), tmpLink);
  await rename(tmpLink, join(dir, DATA_DIR));

  const wanted = topLevelNames(files);
  for (const name of wanted) {
    const link = join(dir, name);
    const st = await lstat(link).catch(() => undefined);
    if (st?.isSymbolicLink() && (await readlink(link)) === join(DATA_DIR, name)) continue;
    if (st) await rm(link, { recursive: true, force: true });
    await symlink(join(DATA_DIR, name), link);
  }
  // What the payload no longer has, the previous payload directory and any left by an interrupted write.
  for (const name of await readdir(dir)) {
    if (wanted.has(name) || name === DATA_DIR || name === basename(tsDir)) continue;
    await rm(join(dir, name), { recursive: true, force: true });
  }
}
