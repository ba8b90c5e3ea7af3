// Pod sources the agent watches, as the kubelet's config package reads them: a static-pod directory
// (read at start, on every change fs.watch reports, and every 20 s as a safety net) and a manifest
// URL (polled every 20 s). Each manifest (a file, the URL) is reported as a whole: its pods, or the
// error that kept it from loading. What the merge does with a broken manifest is up to the receiver.

import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Readable } from 'node:stream';
import type { FieldError } from '../api/field-errors.js';
import type { Pod } from '../api/types.js';
import { loadErrorLines, loadManifests } from './load.js';
import { manifestExtensions } from './sources.js';

/** The kubelet's fileCheckFrequency and httpCheckFrequency. */
export const SOURCE_RECHECK_MS = 20_000;
/** A manifest URL answer larger than this is refused (the API server's request cap). */
export const MAX_URL_MANIFEST_BYTES = 3 * 1024 * 1024;

export type ManifestUpdate =
  { kind: 'pods'; origin: string; pods: Pod[] } | { kind: 'error'; origin: string; error: string } | { kind: 'removed'; origin: string };

export interface SourceOptions {
  nodeName: string;
  /** The rules of the runtime the pods will run on (LoadOptions.extraValidation). */
  podRules: (pod: Pod) => FieldError[];
  onUpdate: (u: ManifestUpdate) => void;
  /** Told when the whole source cannot be read (directory missing, URL unreachable); undefined once it can. */
  onSourceError?: (error: string | undefined) => void;
  recheckMs?: number;
}

async function loadPods(name: string, opts: SourceOptions, text?: string): Promise<Pod[]> {
  const loaded = await loadManifests(text === undefined ? [name] : ['-'], {
    nodeName: opts.nodeName,
    extraValidation: opts.podRules,
    allowEmpty: true,
    ...(text !== undefined ? { stdin: () => Readable.from([text]) } : {}),
  });
  return loaded.pods;
}

/** A static-pod directory: *.yaml, *.yml, *.json, dot-files and subdirectories skipped. */
export class StaticPodDirSource {
  private readonly known = new Map<string, string>();
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private scanning?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    readonly dir: string,
    private readonly opts: SourceOptions,
  ) {}

  /** The first full read, then watching. */
  async start(): Promise<void> {
    await this.scan();
    this.startWatch();
    this.timer = setInterval(() => void this.scan(), this.opts.recheckMs ?? SOURCE_RECHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
  }

  private startWatch(): void {
    if (this.watcher || this.stopped) return;
    try {
      this.watcher = watch(this.dir, { persistent: false }, () => {
        if (this.debounce) clearTimeout(this.debounce);
        // Editors write in several steps; read once they are done.
        this.debounce = setTimeout(() => void this.scan(), 100);
        this.debounce.unref();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      // the directory does not exist (yet): the periodic re-read finds it
    }
  }

  /** Reads the directory; resolves once every change found is reported. */
  scan(): Promise<void> {
    if (this.scanning) {
      this.again = true;
      return this.scanning;
    }
    this.scanning = (async () => {
      do {
        this.again = false;
        await this.scanOnce();
      } while (this.again && !this.stopped);
    })().finally(() => (this.scanning = undefined));
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.dir, { withFileTypes: true }))
        .filter((e) => !e.name.startsWith('.') && !e.isDirectory() && manifestExtensions.includes(extname(e.name).toLowerCase()))
        .map((e) => e.name)
        .sort();
      this.opts.onSourceError?.(undefined);
      this.startWatch();
    } catch (err) {
      this.opts.onSourceError?.(`cannot read static pod directory ${this.dir}: ${(err as Error).message}`);
      names = [];
    }
    const seen = new Set<string>();
    for (const n of names) {
      if (this.stopped) return;
      const path = join(this.dir, n);
      let text: string;
      try {
        if (!(await stat(path)).isFile()) continue;
        text = await readFile(path, 'utf8');
      } catch {
        continue; // removed meanwhile
      }
      seen.add(path);
      if (this.known.get(path) === text) continue;
      this.known.set(path, text);
      try {
        this.opts.onUpdate({ kind: 'pods', origin: path, pods: await loadPods(path, this.opts) });
      } catch (err) {
        this.opts.onUpdate({ kind: 'error', origin: path, error: loadErrorLines(err).join('\n') });
      }
    }
    for (const path of [...this.known.keys()]) {
      if (seen.has(path)) continue;
      this.known.delete(path);
      this.opts.onUpdate({ kind: 'removed', origin: path });
    }
  }
}

/** A manifest URL, fetched at start and every 20 s; a change of its body is a change of its pods. */
export class ManifestURLSource {
  private timer?: NodeJS.Timeout;
  private last?: string;
  private stopped = false;

  constructor(
    readonly url: string,
    private readonly opts: SourceOptions,
  ) {}

  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.opts.recheckMs ?? SOURCE_RECHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  async poll(): Promise<void> {
    let text: string;
    try {
      const res = await fetch(this.url, { signal: AbortSignal.timeout(10_000), headers: { Accept: 'application/yaml, application/json' } });
      if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
      const body = Buffer.from(await res.arrayBuffer());
      if (body.length > MAX_URL_MANIFEST_BYTES) throw new Error(`the manifest is larger than ${MAX_URL_MANIFEST_BYTES} bytes`);
      text = body.toString('utf8');
      this.opts.onSourceError?.(undefined);
    } catch (err) {
      // An unreachable URL changes nothing: its pods keep running.
      this.opts.onSourceError?.(`fetching manifest URL ${this.url}: ${(err as Error).message}`);
      return;
    }
    if (this.stopped || text === this.last) return;
    this.last = text;
    try {
      this.opts.onUpdate({ kind: 'pods', origin: this.url, pods: await loadPods(this.url, this.opts, text) });
    } catch (err) {
      this.opts.onUpdate({
        kind: 'error',
        origin: this.url,
        error: loadErrorLines(err)
          .map((l) => l.replaceAll('STDIN', this.url))
          .join('\n'),
      });
    }
  }
}
