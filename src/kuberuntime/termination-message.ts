// The termination message of a container: a host file (mounted at terminationMessagePath by a
// runtime with mount namespaces, named in an environment variable to a host process), read back once
// the container exited (the kubelet's getTerminationMessage), falling back to the log's tail for
// FallbackToLogsOnError.

import { mkdir, open, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerStatus } from '../runtime/cri.js';
import { readContainerLogText } from '../runtime/logs/reader.js';
import { sandboxDir } from '../runtime/root-dir.js';
import { ANNOTATION_TERMINATION_MESSAGE_POLICY } from './container-config.js';

/** MaxContainerTerminationMessageLength */
export const MAX_TERMINATION_MESSAGE_BYTES = 4 * 1024;
/** MaxPodTerminationMessageLogLength: shared evenly by the pod's containers. */
export const MAX_POD_TERMINATION_MESSAGE_BYTES = 12 * 1024;
/** MaxContainerTerminationMessageLogLength / MaxContainerTerminationMessageLogLines */
export const MAX_TERMINATION_LOG_BYTES = 2 * 1024;
export const MAX_TERMINATION_LOG_LINES = 80;

/** `<sandbox dir>/containers/<container>/<attempt>`: the host file behind terminationMessagePath. */
export function terminationMessageHostPath(rootDir: string, podUid: string, container: string, attempt: number): string {
  return join(sandboxDir(rootDir, podUid), 'containers', container, String(attempt));
}

/** Creates the (empty, world-writable) host file to mount; returns its path. */
export async function createTerminationMessageFile(rootDir: string, podUid: string, container: string, attempt: number): Promise<string> {
  const path = terminationMessageHostPath(rootDir, podUid, container, attempt);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, '', { mode: 0o666 });
  const fh = await open(path, 'r');
  try {
    await fh.chmod(0o666);
  } finally {
    await fh.close();
  }
  return path;
}

/** Opens the host file for reading (a host process's own file is opened refusing symlinks). */
export type MessageFileOpener = (path: string) => Promise<FileHandle>;

/** tail.ReadAtMost: the last max bytes of the file. */
async function readAtMost(path: string, max: number, openFile: MessageFileOpener): Promise<Buffer> {
  const fh = await openFile(path);
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, max);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    return buf;
  } finally {
    await fh.close();
  }
}

/** The message of an exited container: the file, else (FallbackToLogsOnError, failed) the log's tail. */
export async function readTerminationMessage(hostPath: string, status: ContainerStatus, openFile: MessageFileOpener = (p) => open(p, 'r')): Promise<string> {
  const fallback =
    status.annotations[ANNOTATION_TERMINATION_MESSAGE_POLICY] === 'FallbackToLogsOnError' && status.exitCode !== 0 && status.reason !== 'ContainerCannotRun';
  let message = '';
  let checkLogs = fallback;
  try {
    message = (await readAtMost(hostPath, MAX_TERMINATION_MESSAGE_BYTES, openFile)).toString('utf8');
    checkLogs = fallback && message.length === 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return `Error on reading termination log ${hostPath}: ${(e as Error).message}`;
  }
  if (checkLogs && status.logPath) {
    try {
      const text = Buffer.from(await readContainerLogText(status.logPath, { tailLines: MAX_TERMINATION_LOG_LINES }), 'utf8');
      message = text.subarray(Math.max(0, text.length - MAX_TERMINATION_LOG_BYTES)).toString('utf8');
    } catch (e) {
      message = `Error on reading termination message from logs: ${(e as Error).message}`;
    }
  }
  return message;
}

/** normalizeStatus's cut: each container's message at most 12 KiB divided by the pod's containers. */
export function truncateForPod(message: string, containers: number): string {
  const max = Math.floor(MAX_POD_TERMINATION_MESSAGE_BYTES / Math.max(1, containers));
  const b = Buffer.from(message, 'utf8');
  return b.length > max ? b.subarray(0, max).toString('utf8') : message;
}

/**
 * Statuses with each exited container's message: the runtime's own message (e.g. a start error)
 * joined to the termination message, cut to the pod's share; read once per container instance.
 */
export async function withTerminationMessages(
  statuses: ContainerStatus[],
  containers: number,
  cache: Map<string, string>,
  read: (s: ContainerStatus) => Promise<string>,
): Promise<ContainerStatus[]> {
  const out: ContainerStatus[] = [];
  for (const s of statuses) {
    if (s.state !== 'CONTAINER_EXITED') {
      out.push(s);
      continue;
    }
    let msg = cache.get(s.id);
    if (msg === undefined) {
      const t = await read(s);
      msg = truncateForPod(s.message && t ? `${s.message}: ${t}` : s.message || t, containers);
      cache.set(s.id, msg);
    }
    out.push({ ...s, message: msg });
  }
  return out;
}
