// A test double for the agent's KubeBackend: pods and events held in memory with resourceVersions,
// watch history and graceful deletion, exec as real `sh -c` processes and port-forward as real
// TCP connections to 127.0.0.1. The API layer's tests run against it; the real agent's tests
// exercise the same layer over the agent's own backend.

import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { PassThrough, Readable, type Duplex } from 'node:stream';
import type { Pod } from '../../src/api/types.js';
import type { Event } from '../../src/api/types.js';
import type { CreateOptions, DeleteOptions, KubeBackend, ListResult, StreamOptions, Watch, WatchEvent } from '../../src/kubeapi/backend.js';
import { ApiError } from '../../src/http/status.js';
import type { ExecSession, LogOptions } from '../../src/runtime/streams.js';

type Listener<T> = (ev: WatchEvent<T>) => void;

export interface MemoryBackendOptions {
  /**
   * How the store hands pods out. 'clone' (the default): a deep copy each time, so nothing a caller
   * does reaches the store. 'view': a fresh pod and metadata sharing spec and status, as the agent's
   * pod registry serves them; for callers (the bench) that replace a status rather than edit it.
   */
  copies?: 'clone' | 'view';
}

/** A pod as the agent's registry serves it: new top level and metadata, spec and status shared. */
function podView(p: Pod): Pod {
  return { ...p, metadata: { ...p.metadata } };
}

export class MemoryBackend implements KubeBackend {
  readonly nodeName = 'testnode';
  rv = 100;
  pods = new Map<string, Pod>();
  events = new Map<string, Event>();
  private podHistory: Array<{ rv: number; ev: WatchEvent<Pod> }> = [];
  private eventHistory: Array<{ rv: number; ev: WatchEvent<Event> }> = [];
  private podListeners = new Set<Listener<Pod>>();
  private eventListeners = new Set<Listener<Event>>();
  /** Log lines per `ns/pod/container`, and per `…/previous`. */
  logs = new Map<string, string[]>();
  /** Open follow streams, to push more lines. */
  followers = new Set<PassThrough>();
  metrics = new Map<string, { cpuCores: number; memoryBytes: number }>();
  /** Oldest resourceVersion a watch may start from. */
  oldestRV = 0;
  clock: () => number = Date.now;
  private readonly copy: (p: Pod) => Pod;

  constructor(opts: MemoryBackendOptions = {}) {
    this.copy = opts.copies === 'view' ? podView : (p) => structuredClone(p);
  }

  private key(ns: string, name: string): string {
    return `${ns}/${name}`;
  }

  private bump<T extends { metadata?: { resourceVersion?: string } }>(obj: T): T {
    this.rv++;
    (obj.metadata as { resourceVersion?: string }).resourceVersion = String(this.rv);
    return obj;
  }

  private emitPod(type: WatchEvent<Pod>['type'], pod: Pod): void {
    const ev = { type, object: this.copy(pod) };
    this.podHistory.push({ rv: this.rv, ev });
    for (const l of this.podListeners) l(ev);
  }

  now(): string {
    return new Date(this.clock()).toISOString().replace(/\.\d+Z$/, 'Z');
  }

  listPods(): ListResult<Pod> {
    return { items: [...this.pods.values()].map(this.copy), resourceVersion: String(this.rv) };
  }

  getPod(namespace: string, name: string): Pod | undefined {
    const p = this.pods.get(this.key(namespace, name));
    return p && this.copy(p);
  }

  async createPod(pod: Pod, opts?: CreateOptions): Promise<Pod> {
    const ns = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const causes: Array<{ reason: string; message: string; field: string }> = [];
    if (!name) causes.push({ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' });
    if (!pod.spec?.containers?.length) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' });
    if ((opts?.fieldValidation ?? 'Strict') === 'Strict') {
      for (const k of Object.keys(pod.spec ?? {})) {
        if (!['containers', 'initContainers', 'restartPolicy', 'nodeName', 'terminationGracePeriodSeconds', 'volumes', 'readinessGates'].includes(k)) {
          causes.push({ reason: 'FieldValueInvalid', message: `unknown field "spec.${k}"`, field: `spec.${k}` });
        }
      }
    }
    if (causes.length) {
      throw new ApiError(422, 'Invalid', `Pod "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
        name,
        kind: 'Pod',
        causes,
      });
    }
    if (this.pods.has(this.key(ns, name))) {
      throw new ApiError(409, 'AlreadyExists', `pods "${name}" already exists`, { name, kind: 'pods' });
    }
    const stored: Pod = structuredClone(pod);
    stored.metadata = { ...stored.metadata, namespace: ns, uid: `uid-${name}-${this.rv}`, creationTimestamp: this.now() };
    stored.spec = { ...stored.spec!, nodeName: this.nodeName };
    (stored as { status?: Pod['status'] }).status = {
      phase: 'Running',
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      startTime: this.now(),
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: stored.spec.containers.map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: this.now() } },
      })),
    };
    if (opts?.dryRun) return stored;
    this.bump(stored);
    this.pods.set(this.key(ns, name), stored);
    this.emitPod('ADDED', stored);
    return structuredClone(stored);
  }

  /** Replaces a pod's status (as the agent's status manager would). */
  setStatus(ns: string, name: string, status: Pod['status']): void {
    const p = this.pods.get(this.key(ns, name))!;
    (p as { status?: Pod['status'] }).status = status;
    this.bump(p);
    this.emitPod('MODIFIED', p);
  }

  async updatePod(pod: Pod, opts?: CreateOptions): Promise<Pod> {
    const ns = pod.metadata!.namespace!;
    const name = pod.metadata!.name!;
    const cur = this.pods.get(this.key(ns, name));
    if (!cur) throw new ApiError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    if (pod.metadata?.resourceVersion && pod.metadata.resourceVersion !== cur.metadata?.resourceVersion) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name, kind: 'pods' },
      );
    }
    const strip = (p: Pod) => JSON.stringify((p.spec?.containers ?? []).map((c) => ({ ...c, image: undefined })));
    if (strip(pod) !== strip(cur) || (pod.spec?.containers.length ?? 0) !== cur.spec?.containers.length) {
      throw new ApiError(
        422,
        'Invalid',
        `Pod "${name}" is invalid: spec: Forbidden: pod updates may not change fields other than \`spec.containers[*].image\``,
        {
          name,
          kind: 'Pod',
          causes: [
            { reason: 'FieldValueForbidden', message: 'Forbidden: pod updates may not change fields other than `spec.containers[*].image`', field: 'spec' },
          ],
        },
      );
    }
    const next: Pod = structuredClone(cur);
    next.metadata = { ...pod.metadata, uid: cur.metadata!.uid, creationTimestamp: cur.metadata!.creationTimestamp, namespace: ns, name };
    next.spec!.containers = pod.spec!.containers;
    if (opts?.dryRun) return next;
    if (JSON.stringify(next) === JSON.stringify(cur)) return structuredClone(cur);
    this.bump(next);
    this.pods.set(this.key(ns, name), next);
    this.emitPod('MODIFIED', next);
    return structuredClone(next);
  }

  async deletePod(namespace: string, name: string, opts?: DeleteOptions): Promise<Pod> {
    const k = this.key(namespace, name);
    const cur = this.pods.get(k);
    if (!cur) throw new ApiError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    if (opts?.dryRun) return structuredClone(cur);
    const meta = cur.metadata as { deletionTimestamp?: string; deletionGracePeriodSeconds?: number };
    meta.deletionTimestamp = this.now();
    meta.deletionGracePeriodSeconds = opts?.gracePeriodSeconds ?? 30;
    this.bump(cur);
    this.emitPod('MODIFIED', cur);
    const snapshot = structuredClone(cur);
    // The pod goes once its containers have stopped: here, on the next turn.
    setImmediate(() => {
      if (this.pods.get(k) !== cur) return;
      this.pods.delete(k);
      this.bump(cur);
      this.emitPod('DELETED', cur);
    });
    return snapshot;
  }

  private watch<T>(
    rv: string,
    history: Array<{ rv: number; ev: WatchEvent<T> }>,
    listeners: Set<Listener<T>>,
    current: () => T[],
    onEvent: Listener<T>,
  ): Watch {
    if (rv === '' || rv === '0') {
      for (const o of current()) onEvent({ type: 'ADDED', object: o });
    } else {
      const from = Number(rv);
      if (!Number.isFinite(from) || from < this.oldestRV) {
        throw new ApiError(410, 'Expired', `too old resource version: ${rv} (${this.oldestRV})`);
      }
      for (const h of history) if (h.rv > from) onEvent(h.ev);
    }
    listeners.add(onEvent);
    return { stop: () => listeners.delete(onEvent) };
  }

  watchPods(resourceVersion: string, onEvent: Listener<Pod>): Watch {
    return this.watch(resourceVersion, this.podHistory, this.podListeners, () => this.listPods().items, onEvent);
  }

  listEvents(): ListResult<Event> {
    return { items: [...this.events.values()].map((e) => structuredClone(e)), resourceVersion: String(this.rv) };
  }

  addEvent(ev: Event): void {
    this.bump(ev);
    this.events.set(this.key(ev.metadata.namespace ?? 'default', ev.metadata.name ?? ''), ev);
    const w = { type: 'ADDED' as const, object: structuredClone(ev) };
    this.eventHistory.push({ rv: this.rv, ev: w });
    for (const l of this.eventListeners) l(w);
  }

  watchEvents(resourceVersion: string, onEvent: Listener<Event>): Watch {
    return this.watch(resourceVersion, this.eventHistory, this.eventListeners, () => this.listEvents().items, onEvent);
  }

  namespaces(): string[] {
    return [...new Set(['default', ...[...this.pods.values()].map((p) => p.metadata!.namespace!)])];
  }

  async podLog(namespace: string, name: string, opts: LogOptions): Promise<Readable> {
    const base = `${namespace}/${name}/${opts.container}`;
    const lines = this.logs.get(opts.previous ? `${base}/previous` : base);
    if (!lines) {
      if (opts.previous) throw new ApiError(400, 'BadRequest', `previous terminated container "${opts.container}" in pod "${name}" not found`);
      return Readable.from([]);
    }
    let shown = opts.tailLines !== undefined ? lines.slice(Math.max(0, lines.length - opts.tailLines)) : lines;
    if (opts.timestamps) shown = shown.map((l) => `2026-01-01T00:00:00.000000000Z ${l}`);
    const text = shown.map((l) => l + '\n').join('');
    if (!opts.follow) return Readable.from([Buffer.from(text)]);
    const out = new PassThrough();
    out.write(text);
    this.followers.add(out);
    out.on('close', () => this.followers.delete(out));
    return out;
  }

  async exec(namespace: string, name: string, opts: StreamOptions): Promise<ExecSession> {
    if (!this.pods.has(this.key(namespace, name))) throw new ApiError(404, 'NotFound', `pods "${name}" not found`);
    const child = spawn(opts.command[0]!, opts.command.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    const resizes: Array<[number, number]> = [];
    const exit = new Promise<number>((resolve, reject) => {
      child.on('error', (err) => reject(new Error(`exec: "${opts.command[0]}": ${err.message}`)));
      child.on('close', (code, signal) => resolve(code ?? (signal ? 137 : 1)));
    });
    if (!opts.stdin) child.stdin.end();
    child.stdin.on('error', () => {});
    return {
      ...(opts.stdin ? { stdin: child.stdin } : {}),
      stdout: child.stdout,
      ...(opts.tty ? {} : { stderr: child.stderr }),
      resize: (w, h) => resizes.push([w, h]),
      exit,
      kill: () => child.kill('SIGKILL'),
    };
  }

  async attach(namespace: string, name: string, opts: Omit<StreamOptions, 'command'>): Promise<ExecSession> {
    return this.exec(namespace, name, { ...opts, command: ['cat'] });
  }

  async portForward(_namespace: string, _name: string, port: number): Promise<Duplex> {
    const sock = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    return sock;
  }

  podMetrics(namespace: string, name: string): ReturnType<KubeBackend['podMetrics']> {
    const pod = this.pods.get(this.key(namespace, name));
    if (!pod) return undefined;
    return {
      timestamp: this.now(),
      window: '30s',
      containers: pod.spec!.containers.map((c) => ({
        name: c.name,
        ...(this.metrics.get(`${namespace}/${name}/${c.name}`) ?? { cpuCores: 0.003, memoryBytes: 12 * 1024 * 1024 }),
      })),
    };
  }
}
