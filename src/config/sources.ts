// Reads the manifest sources given with -f: files, directories (as the kubelet reads a static-pod
// directory: *.yaml, *.yml and *.json in name order, dot-files skipped; subdirectories only with
// -R, as kubectl's --recursive) and stdin. A source over maxSourceBytes is refused unread.
// Regular files are read with synchronous calls: a command reads its sources before anything else,
// and each call through the thread pool would cost a turn of the event loop (some 10 ms of waiting
// for a dozen files). Pipes and devices are read asynchronously, as streams.

import { builtin } from '../util/builtins.js';
import { maxSourceBytes } from './limits.js';

const { closeSync, constants, fstatSync, openSync, readSync, readdirSync, statSync } = builtin('node:fs');
const { extname, join, resolve } = builtin('node:path');

export interface SourceFile {
  /** The name printed in messages: the path as given (joined with the entry for directories), or `STDIN`. */
  name: string;
  /** Absolute path; undefined for stdin. */
  path?: string;
  text: string;
}

export const manifestExtensions = ['.yaml', '.yml', '.json'];

/** Thrown by readStream when the input passes the byte limit. */
export class SourceTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
    this.name = 'SourceTooLargeError';
  }
}

export async function readStream(stream: NodeJS.ReadableStream, limit = Infinity): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    total += b.length;
    if (total > limit) throw new SourceTooLargeError(limit);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const tooLarge = (name: string, size: number | undefined, limit: number) =>
  `error: ${name}: the file is ${size === undefined ? `over ${limit}` : size} bytes; podvisor reads manifest files of at most ${limit} bytes`;

export interface ReadSourcesOptions {
  /** Opened only when a source is `-`. */
  stdin?: () => NodeJS.ReadableStream;
  cwd?: string;
  /** Descend into subdirectories of directory sources (kubectl's -R). */
  recursive?: boolean;
  /** Largest source read, in bytes; default maxSourceBytes. */
  maxBytes?: number;
}

/** Reads every source; unreadable ones become error messages (kubectl's wording) instead of throwing. */
export async function readSources(sources: readonly string[], opts: ReadSourcesOptions): Promise<{ files: SourceFile[]; errors: string[] }> {
  const files: SourceFile[] = [];
  const errors: string[] = [];
  const cwd = opts.cwd ?? process.cwd();
  const limit = opts.maxBytes ?? maxSourceBytes;
  let stdinRead = false;

  const readOne = async (name: string, path: string) => {
    try {
      const read = await readLimited(path, limit);
      if (typeof read === 'string') files.push({ name, path, text: read });
      else errors.push(tooLarge(name, read, limit));
    } catch (err) {
      errors.push(`error: reading "${name}": ${(err as Error).message}`);
    }
  };

  const walk = async (name: string, dir: string, descend: boolean): Promise<void> => {
    const entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = join(dir, e.name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) {
        if (descend) await walk(join(name, e.name), p, true);
        continue;
      }
      if (!st.isFile() || !manifestExtensions.includes(extname(e.name).toLowerCase())) continue;
      await readOne(join(name, e.name), p);
    }
  };

  for (const src of sources) {
    if (src === '-') {
      if (stdinRead) continue;
      stdinRead = true;
      if (!opts.stdin) {
        errors.push('error: standard input is not available');
        continue;
      }
      try {
        files.push({ name: 'STDIN', text: await readStream(opts.stdin(), limit) });
      } catch (err) {
        errors.push(err instanceof SourceTooLargeError ? tooLarge('STDIN', undefined, limit) : 'error: reading "STDIN" failed');
      }
      continue;
    }
    const abs = resolve(cwd, src);
    let st;
    try {
      st = statSync(abs);
    } catch {
      errors.push(`error: the path "${src}" does not exist`);
      continue;
    }
    if (st.isDirectory()) {
      try {
        await walk(src, abs, opts.recursive === true);
      } catch (err) {
        errors.push(`error: reading "${src}": ${(err as Error).message}`);
      }
    } else {
      await readOne(src, abs);
    }
  }
  return { files, errors };
}

/**
 * The file's text; when it holds more than limit bytes, its size (undefined for a stream). A regular
 * file is read synchronously (never past limit + 1 bytes), anything else as a stream, as stdin is:
 * a pipe is opened only by the stream, as its one reader (a first open and close would let the
 * writer start and then fail on the closed end).
 */
async function readLimited(path: string, limit: number): Promise<string | number | undefined> {
  if (statSync(path).isFile()) {
    // Without blocking: a FIFO put in the file's place meanwhile cannot hold the caller.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const st = fstatSync(fd);
      if (st.isFile()) {
        if (st.size > limit) return st.size;
        return readToEnd(fd, st.size, limit) ?? fstatSync(fd).size;
      }
    } finally {
      closeSync(fd);
    }
  }
  try {
    return await readStream(builtin('node:fs').createReadStream(path), limit);
  } catch (err) {
    if (err instanceof SourceTooLargeError) return undefined;
    throw err;
  }
}

/** A regular file's text read to its end (its size can change meanwhile); undefined past limit. */
function readToEnd(fd: number, size: number, limit: number): string | undefined {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(Math.min(Math.max(size - total, 0) + 65536, limit + 1 - total));
    if (buf.length === 0) return undefined;
    const bytesRead = readSync(fd, buf, 0, buf.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > limit) return undefined;
    chunks.push(buf.subarray(0, bytesRead));
  }
  return Buffer.concat(chunks, total).toString('utf8');
}
