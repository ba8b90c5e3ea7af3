// API writes on a full root dir: a write that fails for want of space (ENOSPC, or EDQUOT past a quota)
// answers 507 Insufficient Storage with what was not stored, instead of a 500; the crash-safe writes
// leave what was stored before as it was. (kube-apiserver answers 500 "etcdserver: mvcc: database
// space exceeded" when etcd is full; the HTTP status that names the cause is kept here instead.)

import { ApiError } from '../http/status.js';

const OUT_OF_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** The API's error for a write refused by a full file system. */
export function insufficientStorage(resource: string, name: string): ApiError {
  return new ApiError(
    507,
    'InsufficientStorage',
    `${resource} "${name}" was not stored: no space left on the file system of the agent's root dir; what was stored before is unchanged`,
    { name, kind: resource },
  );
}

/** Runs a write of resource/name; a full file system becomes 507 Insufficient Storage. */
export async function storing<T>(resource: string, name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (OUT_OF_SPACE.has(String((err as NodeJS.ErrnoException | undefined)?.code))) throw insufficientStorage(resource, name);
    throw err;
  }
}
