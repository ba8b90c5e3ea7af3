// The process runtime's durable state: one JSON file per sandbox and per container under the state
// directory (0700, files 0600), each replaced atomically (write a temporary file, then rename), so a
// runtime killed at any moment finds on restart what it had and every exit it recorded.

import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerConfig, ContainerStatus, PodSandboxConfig, SandboxState } from '../cri.js';
import type { Logger } from '../../util/logger.js';
import type { PodNetworkAttachment } from './pod-netns.js';

/** Where the runtime service keeps its state in a root dir. */
export function runtimeStateDir(rootDir: string): string {
  return join(rootDir, 'runtime');
}

/** The runtime service's endpoint unless told otherwise: `unix://<root>/runtime.sock`. */
export function defaultRuntimeEndpoint(rootDir: string): string {
  return `unix://${join(rootDir, 'runtime.sock')}`;
}

/** What a sandbox's file holds. */
export interface StoredSandbox {
  id: string;
  config: PodSandboxConfig;
  dir: string;
  state: SandboxState;
  createdAt: number;
  /** Its network namespace and address, with a pod network. */
  network?: PodNetworkAttachment;
}

/** What a container's file holds: its status and what is needed to supervise it after a restart. */
export interface StoredContainer {
  status: ContainerStatus;
  config: ContainerConfig;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The main process (also its process group), while it runs. */
  pid?: number;
  /** Its start time (/proc/<pid>/stat field 22, clock ticks since boot) and the boot it belongs to. */
  startTime?: string;
  bootId?: string;
  /**
   * Written before the process is spawned and cleared once its pid is recorded: a runtime that dies
   * in between finds the process on restart by its output FIFOs (adopt.ts findSpawned).
   */
  startBegunAt?: number;
}

/** Ids are the runtime's own 64 hex digits: nothing else becomes a file name. */
const ID = /^[0-9a-f]{64}$/;

export function isRuntimeId(id: string): boolean {
  return ID.test(id);
}

export class RuntimeStateStore {
  private readonly sandboxDir: string;
  private readonly containerDir: string;
  /** Per file, the last write: writes of one file happen in the order they were asked for. */
  private readonly pending = new Map<string, Promise<void>>();
  /** Per file, a write asked for that has not begun (it waits for the one before it). */
  private readonly waiting = new Map<string, { data: string; done: Promise<void> }>();

  constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {
    this.sandboxDir = join(dir, 'sandboxes');
    this.containerDir = join(dir, 'containers');
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await mkdir(this.sandboxDir, { recursive: true, mode: 0o700 });
    await mkdir(this.containerDir, { recursive: true, mode: 0o700 });
  }

  /** A directory of this container's own (its output FIFOs). */
  ioDir(containerId: string): string {
    if (!isRuntimeId(containerId)) throw new Error(`invalid container id ${JSON.stringify(containerId)}`);
    return join(this.dir, 'io', containerId);
  }

  saveSandbox(sb: StoredSandbox): Promise<void> {
    return this.logged(this.write(this.sandboxDir, sb.id, sb));
  }

  /** As saveSandbox, rejecting when the write fails: a sandbox is created only once it is recorded. */
  saveSandboxBeforeActing(sb: StoredSandbox): Promise<void> {
    return this.write(this.sandboxDir, sb.id, sb);
  }

  saveContainer(c: StoredContainer): Promise<void> {
    return this.logged(this.write(this.containerDir, c.status.id, c));
  }

  /**
   * As saveContainer, for a record that must be on disk before the runtime acts on it (a process is
   * spawned only once its write-ahead record is): rejects when the write fails.
   */
  saveContainerBeforeActing(c: StoredContainer): Promise<void> {
    return this.write(this.containerDir, c.status.id, c);
  }

  removeSandbox(id: string): Promise<void> {
    return this.remove(this.sandboxDir, id);
  }

  async removeContainer(id: string): Promise<void> {
    await this.remove(this.containerDir, id);
    if (isRuntimeId(id)) await rm(this.ioDir(id), { recursive: true, force: true });
  }

  /** Everything recorded; unreadable files are reported and skipped. */
  async load(): Promise<{ sandboxes: StoredSandbox[]; containers: StoredContainer[] }> {
    return {
      sandboxes: await this.readAll<StoredSandbox>(this.sandboxDir),
      containers: await this.readAll<StoredContainer>(this.containerDir),
    };
  }

  /** Resolves once every write asked for so far is done. */
  async flush(): Promise<void> {
    await Promise.all([...this.pending.values()]);
  }

  private async readAll<T>(dir: string): Promise<T[]> {
    const out: T[] = [];
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return out;
    }
    for (const name of names) {
      if (!name.endsWith('.json') || !isRuntimeId(name.slice(0, -5))) continue;
      try {
        out.push(JSON.parse(await readFile(join(dir, name), 'utf8')) as T);
      } catch (err) {
        this.logger.warn('Unreadable runtime state file skipped', { file: join(dir, name), err: String(err) });
      }
    }
    return out;
  }

  private write(dir: string, id: string, value: unknown): Promise<void> {
    if (!isRuntimeId(id)) return Promise.reject(new Error(`invalid id ${JSON.stringify(id)}`));
    const file = join(dir, `${id}.json`);
    const data = JSON.stringify(value);
    // A write of this file still waiting for the one before it takes this newer content instead of
    // queueing another: one file (a new inode) less, and its promise still resolves once this
    // content is on disk. A container created and started in a burst is written once or twice.
    const waiting = this.waiting.get(file);
    if (waiting) {
      waiting.data = data;
      return waiting.done;
    }
    const entry: { data: string; done: Promise<void> } = { data, done: Promise.resolve() };
    this.waiting.set(file, entry);
    entry.done = this.chain(file, async () => {
      if (this.waiting.get(file) === entry) this.waiting.delete(file);
      const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
      // Synchronous: a few kilobytes to a local directory cost less than the four thread-pool round
      // trips of the asynchronous calls, each a wait of milliseconds on a loaded host, and a
      // container's start and exit each wait for a write or two before they are reported.
      try {
        writeFileSync(tmp, entry.data, { mode: 0o600 });
        renameSync(tmp, file);
      } catch (err) {
        // A full disk leaves no partial temporary file behind; the file itself is untouched.
        try {
          unlinkSync(tmp);
        } catch {
          // never made
        }
        throw err;
      }
    });
    return entry.done;
  }

  private remove(dir: string, id: string): Promise<void> {
    if (!isRuntimeId(id)) return Promise.resolve();
    const file = join(dir, `${id}.json`);
    // A write asked for after this removal must follow it, not join a write queued before it.
    this.waiting.delete(file);
    return this.logged(this.chain(file, () => unlink(file).catch(() => {})));
  }

  /** A write whose failure is logged, not raised (the state in memory stays right; the next write retries). */
  private logged(write: Promise<void>): Promise<void> {
    return write.catch((err: unknown) => this.logger.error('Failed to write runtime state', { err: String(err) }));
  }

  /** Runs op after the file's previous operation; the result rejects when op fails, the chain goes on. */
  private chain(file: string, op: () => Promise<void>): Promise<void> {
    const prev = this.pending.get(file) ?? Promise.resolve();
    const next = prev.then(op, op);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.pending.set(file, settled);
    void settled.then(() => {
      if (this.pending.get(file) === settled) this.pending.delete(file);
    });
    return next;
  }
}

/** The pid of the service holding `<stateDir>/service.lock`, if that process still runs. */
export function lockHolder(stateDir: string, same: (pid: number, startTime: string) => boolean): number | undefined {
  try {
    const [pid, start] = readFileSync(join(stateDir, 'service.lock'), 'utf8').trim().split(' ');
    return pid && start && same(Number(pid), start) ? Number(pid) : undefined;
  } catch {
    return undefined;
  }
}
