// A cache of one kind kept by a watch (client-go's SharedInformer and Lister in small): the current
// objects by namespace/name, and handlers told of each add, update and delete. Its source is any
// list+watch (a Storage of the object store, the backend's pods); nothing is polled.

import type { KubeObject, Watch, WatchEvent } from '../kubeapi/backend.js';

/** What an informer reads: a watch that starts with the current objects as ADDED events ('' version). */
export interface WatchSource<T> {
  watch(resourceVersion: string, onEvent: (ev: WatchEvent<T>) => void): Watch;
}

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(old: T, obj: T): void;
  onDelete?(obj: T): void;
}

export function objectKey(o: KubeObject): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

export class Informer<T extends KubeObject> {
  private readonly cache = new Map<string, T>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private watch?: Watch;

  constructor(private readonly source: WatchSource<T>) {}

  /** Adds handlers; call before start to see the initial objects. */
  on(h: InformerHandlers<T>): void {
    this.handlers.push(h);
  }

  start(): void {
    if (this.watch) return;
    this.watch = this.source.watch('', (ev) => this.apply(ev));
  }

  stop(): void {
    this.watch?.stop();
    this.watch = undefined;
  }

  private apply(ev: WatchEvent<T>): void {
    const key = objectKey(ev.object);
    const old = this.cache.get(key);
    if (ev.type === 'DELETED') {
      this.cache.delete(key);
      for (const h of this.handlers) h.onDelete?.(ev.object);
      return;
    }
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return;
    this.cache.set(key, ev.object);
    for (const h of this.handlers) {
      if (old) h.onUpdate?.(old, ev.object);
      else h.onAdd?.(ev.object);
    }
  }

  get(namespace: string, name: string): T | undefined {
    return this.cache.get(`${namespace}/${name}`);
  }

  /** The objects of one namespace (all when undefined). */
  list(namespace?: string): T[] {
    const out: T[] = [];
    for (const o of this.cache.values()) if (namespace === undefined || o.metadata?.namespace === namespace) out.push(o);
    return out;
  }
}
