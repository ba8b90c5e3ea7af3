// The revision history of a StatefulSet's or DaemonSet's pod template as ControllerRevisions
// (pkg/controller/history, and the revision steps of statefulset/stateful_set_control.go and daemon/update.go).
// A revision named `<owner>-<hash>` holds the template as the patch `rollout undo` applies; the hash
// (FNV-32a with the collisionCount) is also its controller-revision-hash label.

import type { ControllerRevision, PodTemplateSpec } from '../api/types.js';
import { canonicalJSON } from '../api/defaults.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import type { Informer } from './informer.js';
import { controllerRef, ownerRefTo } from './pod-control.js';
import { computeHash } from './pod-template-hash.js';

export const revisionHashLabel = 'controller-revision-hash';

/** The template a revision holds (its data is `{spec: {template: {…, $patch: replace}}}`, as upstream's getPatch). */
export function revisionTemplate(rev: ControllerRevision): PodTemplateSpec {
  const data = rev.data as { spec?: { template?: PodTemplateSpec & { $patch?: string } } } | undefined;
  const { $patch: _patch, ...template } = data?.spec?.template ?? {};
  return template;
}

/** Templates compared as stored (a client's `creationTimestamp: null` and the patch directive ignored). */
export function sameTemplate(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  const norm = (t: PodTemplateSpec | undefined) => canonicalJSON(JSON.parse(JSON.stringify(t ?? {}, (_k, v: unknown) => (v === null ? undefined : v))));
  return norm(a) === norm(b);
}

/** The hash of a revision (its controller-revision-hash label, or the end of its name). */
export function revisionHash(rev: ControllerRevision): string {
  return rev.metadata?.labels?.[revisionHashLabel] ?? rev.metadata?.name?.split('-').pop() ?? '';
}

export interface Revisions {
  /** Every revision of the owner, oldest first. */
  all: ControllerRevision[];
  /** The revision of the owner's current template. */
  update: ControllerRevision;
  /** The revision the owner's status names as current, else the update revision. */
  current: ControllerRevision;
  collisionCount: number;
}

interface Owner extends KubeObject {
  spec?: { template?: PodTemplateSpec };
  status?: { collisionCount?: number };
}

export class RevisionHistory {
  private readonly revisions: Informer<ControllerRevision>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly ownerKind: string,
  ) {
    this.revisions = ctx.informer<ControllerRevision>('ControllerRevision');
  }

  /** The owner's revisions, by revision number (oldest first). */
  owned(owner: KubeObject): ControllerRevision[] {
    return this.revisions
      .list(owner.metadata?.namespace ?? '')
      .filter((r) => controllerRef(r)?.uid === owner.metadata?.uid)
      .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
  }

  /**
   * The update revision of the owner's template (found, renumbered as the newest, or created) and the
   * current one named by currentName; undefined when a write lost a race (the next sync retries).
   */
  async ensure(owner: Owner, currentName: string | undefined): Promise<Revisions | undefined> {
    const ns = owner.metadata!.namespace!;
    const template = owner.spec?.template ?? {};
    const storage = this.ctx.storage('ControllerRevision');
    const all = this.owned(owner);
    const newest = all.at(-1);
    const next = (newest?.revision ?? 0) + 1;
    let collisionCount = owner.status?.collisionCount ?? 0;
    const equal = all.filter((r) => sameTemplate(revisionTemplate(r), template));
    let update = equal.at(-1);
    if (update && update !== newest) {
      // A rollback to an older template: that revision becomes the newest.
      const bumped = { ...structuredClone(update), revision: next };
      update = (await storage.update!(bumped as KubeObject, {}).catch(this.lostRace)) as ControllerRevision | undefined;
      if (!update) return undefined;
    }
    while (!update) {
      const hash = computeHash(template, collisionCount);
      const rev: ControllerRevision = {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: `${owner.metadata!.name}-${hash}`,
          namespace: ns,
          labels: { ...(template.metadata?.labels ?? {}), [revisionHashLabel]: hash },
          ownerReferences: [ownerRefTo(owner, 'apps/v1', this.ownerKind)],
        },
        data: { spec: { template: { ...structuredClone(template), $patch: 'replace' } } },
        revision: next,
      };
      try {
        update = (await storage.create!(rev as KubeObject, {})) as ControllerRevision;
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
        const clash = storage.get(ns, rev.metadata!.name!) as ControllerRevision | undefined;
        if (clash && controllerRef(clash)?.uid === owner.metadata?.uid && sameTemplate(revisionTemplate(clash), template)) update = clash;
        else collisionCount++;
      }
    }
    const fresh = this.owned(owner);
    const current = fresh.find((r) => r.metadata?.name === currentName) ?? update;
    return { all: fresh.some((r) => r.metadata?.uid === update.metadata?.uid) ? fresh : [...fresh, update], update, current, collisionCount };
  }

  /** Deletes the oldest revisions beyond the limit that are neither live (named in keep) nor current. */
  async truncate(revs: Revisions, keep: ReadonlySet<string>, limit: number): Promise<void> {
    const live = new Set([revs.current.metadata!.name!, revs.update.metadata!.name!, ...keep]);
    const history = revs.all.filter((r) => !live.has(r.metadata!.name!));
    for (const r of history.slice(0, Math.max(0, history.length - limit))) {
      await this.ctx.storage('ControllerRevision').delete!(r.metadata!.namespace!, r.metadata!.name!, {}).catch(this.lostRace);
    }
  }

  private readonly lostRace = (err: unknown): undefined => {
    if (!isConflictOrGone(err)) throw err;
    return undefined;
  };
}
