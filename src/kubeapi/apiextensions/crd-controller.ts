// Serves what the stored CustomResourceDefinitions define: watching them, it has the object store keep
// each established CRD's kind (customResourceStrategy) and gives the resource registry its rows
// (customResourceDefs); a CRD deleted takes its objects with it.
// Upstream: apiextensions-apiserver's crdHandler (its crdInfo per CRD, rebuilt on change) and the
// finalizer controller (pkg/controller/finalizer) that deletes a removed CRD's custom resources.

import type { ObjectsBackend, Watch } from '../backend.js';
import type { ResourceDef } from '../resource-def.js';
import type { ResourceSource } from '../resource-registry.js';
import { isEstablished, type CustomResourceDefinition } from './crd.js';
import { customResourceDefs, customResourceStrategy } from './custom-resources.js';

export class CustomResourceController implements ResourceSource {
  private readonly served = new Map<string, { kind: string; rows: ResourceDef[] }>();
  private current: readonly ResourceDef[] = [];
  private readonly watch?: Watch;
  /** Removals under way (the objects' deletion), awaited by `settled`. */
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly objects: ObjectsBackend) {
    const crds = objects.storage('CustomResourceDefinition');
    if (!crds?.watch || !objects.defineKind || !objects.removeKind) return;
    this.watch = crds.watch('', (ev) => {
      if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') return;
      const crd = ev.object as CustomResourceDefinition;
      const name = crd.metadata?.name ?? '';
      if (ev.type === 'DELETED') this.remove(name);
      else if (isEstablished(crd)) this.define(crd);
      // A CRD whose names are not accepted serves nothing; its objects stay until it is deleted.
      else if (this.served.delete(name)) this.refresh();
    });
  }

  rows(): readonly ResourceDef[] {
    return this.current;
  }

  /** Resolves when the objects of removed CRDs are gone. */
  settled(): Promise<void> {
    return this.pending;
  }

  stop(): void {
    this.watch?.stop();
  }

  private define(crd: CustomResourceDefinition): void {
    const name = crd.metadata?.name ?? '';
    const was = this.served.get(name);
    if (was && was.kind !== crd.spec.names.kind) this.remove(name);
    this.objects.defineKind!(customResourceStrategy(crd));
    this.served.set(name, { kind: crd.spec.names.kind, rows: customResourceDefs(crd) });
    this.refresh();
  }

  private remove(name: string): void {
    const was = this.served.get(name);
    if (!was) return;
    this.served.delete(name);
    this.refresh();
    const removal = this.objects.removeKind!(was.kind);
    this.pending = this.pending.then(() => removal).catch(() => undefined);
  }

  private refresh(): void {
    this.current = [...this.served.values()].flatMap((s) => s.rows);
  }
}
