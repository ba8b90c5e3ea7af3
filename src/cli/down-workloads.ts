// What `down` deletes before the pods: the Services and workloads of the manifests (or, with --all,
// every workload on the agent), by background propagation so their pods go with them, printed as
// kubectl delete prints them (`deployment.apps "web" deleted`).

import type { ManifestObject } from '../config/object-kinds.js';
import { qualifiedName } from '../config/object-kinds.js';
import type { CommandIO } from './args.js';
import { agentRequest, replyMessage } from './agent-client.js';
import { objectPath } from './object-paths.js';

/** The workload kinds `down --all` deletes, owners before what they own. */
const allKinds: [string, string][] = [
  ['CronJob', 'batch/v1'],
  ['Job', 'batch/v1'],
  ['Deployment', 'apps/v1'],
  ['StatefulSet', 'apps/v1'],
  ['DaemonSet', 'apps/v1'],
  ['ReplicaSet', 'apps/v1'],
];

/** Deletes the objects (`all`: every workload of the agent not owned by another); resolves to the exit code. */
export async function deleteWorkloads(rootDir: string, objects: readonly ManifestObject[] | 'all', io: Pick<CommandIO, 'stdout' | 'stderr'>): Promise<number> {
  let targets: ManifestObject[] = [];
  if (objects === 'all') {
    for (const [kind, apiVersion] of allKinds) {
      const r = await agentRequest(rootDir, 'GET', objectPath(apiVersion, kind, undefined));
      if (r.status !== 200) continue;
      const items = r.json<{ items: ManifestObject[] }>().items.filter((o) => !(o.metadata?.ownerReferences ?? []).some((ref) => ref.controller));
      targets.push(...items.map((o) => ({ ...o, apiVersion, kind: kind as ManifestObject['kind'] })));
    }
  } else targets = [...objects];
  // A Namespace goes after what it holds (whose deletion it would do otherwise).
  targets.sort((a, b) => Number(a.kind === 'Namespace') - Number(b.kind === 'Namespace'));
  let code = 0;
  for (const o of targets) {
    const path = `${objectPath(o.apiVersion, o.kind, o.metadata?.namespace ?? 'default', o.metadata?.name ?? '')}?propagationPolicy=Background`;
    const r = await agentRequest(rootDir, 'DELETE', path);
    const [type, name] = qualifiedName(o).split('/', 2);
    if (r.status === 200 || r.status === 202) io.stdout.write(`${type} "${name}" deleted\n`);
    else if (r.status === 404) io.stderr.write(`${type}/${name} not found: nothing to delete\n`);
    else {
      const m = replyMessage(r);
      io.stderr.write(`Error from server (${m.reason}): ${m.message}\n`);
      code = 1;
    }
  }
  return code;
}
