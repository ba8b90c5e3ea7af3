// The ClusterRole aggregation controller (pkg/controller/clusterroleaggregation): a ClusterRole with an
// aggregationRule holds the rules of every other ClusterRole its clusterRoleSelectors select — for each
// selector, the selected roles by name, their rules appended unless already present — rewritten whenever
// a ClusterRole changes. `admin`, `edit` and `view` are built so from the aggregate-to-* roles.

import { selectorMatches } from '../api/label-selector.js';
import { canonicalJSON } from '../api/defaults.js';
import type { ClusterRole, PolicyRule } from '../api/validation/rbac.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { isConflictOrGone, type ControllerContext } from './context.js';
import { objectKey, type Informer } from './informer.js';
import type { WorkQueue } from './work-queue.js';

type Role = ClusterRole & KubeObject;

/** The rules an aggregated role holds: those of the roles its selectors pick, in selector then name order, without repeats. */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const picked = all
      .filter((r) => r.metadata?.name !== role.metadata?.name && selectorMatches(selector, r.metadata?.labels))
      .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
    for (const r of picked) {
      for (const rule of r.rules ?? []) {
        const key = canonicalJSON(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(rule);
      }
    }
  }
  return rules;
}

export class ClusterRoleAggregationController {
  readonly queue: WorkQueue;
  private readonly roles: Informer<Role>;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = ctx.workQueue('clusterrole-aggregation', (key) => this.sync(key));
    this.roles = ctx.informer('ClusterRole');
    // Any change may change what an aggregated role selects: every aggregated role is synced again.
    const enqueueAggregated = () => {
      for (const r of this.roles.list()) if (r.aggregationRule) this.queue.add(objectKey(r));
    };
    this.roles.on({ onAdd: enqueueAggregated, onUpdate: enqueueAggregated, onDelete: enqueueAggregated });
  }

  private async sync(key: string): Promise<void> {
    const name = key.slice(key.indexOf('/') + 1);
    const role = this.roles.get('', name);
    if (!role?.aggregationRule) return;
    const rules = aggregatedRules(role, this.roles.list());
    if (canonicalJSON(rules) === canonicalJSON(role.rules ?? [])) return;
    try {
      const next: Role = { ...role, rules };
      await this.ctx.storage('ClusterRole').update!(next, {});
    } catch (err) {
      if (!isConflictOrGone(err)) throw err;
      this.queue.add(key);
    }
  }
}
