// Reads the manifest sources given with -f: files, directories (as the kubelet reads a static-pod
// directory: *.yaml, *.yml and *.json in name order, dot-files skipped, not recursive) and stdin.

import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';

export interface SourceFile {
  /** The name printed in messages: the path as given (joined with the entry for directories), or `STDIN`. */
  name: string;
  /** Absolute path; undefined for stdin. */
  path?: string;
  text: string;
}

export const manifestExtensions = ['.yaml', '.yml', '.json'];

export async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads every source; unreadable ones become error messages (kubectl's wording) instead of throwing. */
export async function readSources(
  sources: readonly string[],
  opts: { stdin?: NodeJS.ReadableStream; cwd?: string },
): Promise<{ files: SourceFile[]; errors: string[] }> {
  const files: SourceFile[] = [];
  const errors: string[] = [];
  const cwd = opts.cwd ?? process.cwd();
  let stdinRead = false;
  for (const src of sources) {
    if (src === '-') {
      if (stdinRead) continue;
      stdinRead = true;
      if (!opts.stdin) {
        errors.push('error: standard input is not available');
        continue;
      }
      files.push({ name: 'STDIN', text: await readStream(opts.stdin) });
      continue;
    }
    const abs = resolve(cwd, src);
    let st;
    try {
      st = await stat(abs);
    } catch {
      errors.push(`error: the path "${src}" does not exist`);
      continue;
    }
    try {
      if (st.isDirectory()) {
        const entries = (await readdir(abs, { withFileTypes: true }))
          .filter((e) => !e.name.startsWith('.') && !e.isDirectory() && manifestExtensions.includes(extname(e.name).toLowerCase()))
          .map((e) => e.name)
          .sort();
        for (const entry of entries) {
          const p = join(abs, entry);
          const st2 = await stat(p);
          if (!st2.isFile()) continue;
          files.push({ name: join(src, entry), path: p, text: await readFile(p, 'utf8') });
        }
      } else {
        files.push({ name: src, path: abs, text: await readFile(abs, 'utf8') });
      }
    } catch (err) {
      errors.push(`error: reading "${src}": ${(err as Error).message}`);
    }
  }
  return { files, errors };
}
