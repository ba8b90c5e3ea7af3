// Crash-safe file replacement: write a temporary file beside the target, fsync it, rename it over the
// target and fsync the directory, so a reader (or an agent restarted after a crash) sees the old
// content or the new one, never a torn file.

import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Replaces path with data atomically; the file gets mode (default 0600) whatever the umask. */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.chmod(mode);
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  } finally {
    await fh.close().catch(() => {});
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await syncDir(dirname(path));
}

/** fsyncs a directory so a rename or unlink in it is durable. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r').catch(() => undefined);
  if (!dh) return;
  try {
    await dh.sync();
  } catch {
    // some filesystems refuse fsync on directories
  } finally {
    await dh.close();
  }
}
