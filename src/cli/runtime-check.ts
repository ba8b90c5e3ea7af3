// What `apply` and `up -d` check before they apply anything: that the agent's runtime can run every
// Pod and workload template of the manifests (runtime/pod-rules.ts, the same rules validate, up and
// run apply from --runtime), each problem said in the API server's words, all at once, exit 2. The
// runtime's capabilities are the agent's own (its status document), or, before `apply` starts an
// agent, those of the runtime it would start.

import type { Pod } from '../api/types.js';
import { formatInvalidObject, type LoadedManifests } from '../config/load.js';
import type { ManifestObject } from '../config/object-kinds.js';
import type { RuntimeCapabilities } from '../runtime/cri.js';
import { declaredCapabilities, runtimeObjectRules, type PodCapabilities } from '../runtime/pod-rules.js';
import { agentFlagSpecs } from './agent-flags.js';
import type { CommandIO } from './args.js';
import { agentRequest, agentRunning } from './agent-client.js';

/** The capabilities of the runtime the agent of root runs pods on; undefined when it does not say. */
export async function agentRuntimeCapabilities(root: string): Promise<RuntimeCapabilities | undefined> {
  const r = await agentRequest(root, 'GET', '/podvisor/v1/status');
  if (r.status !== 200) return undefined;
  return r.json<{ runtimeCapabilities?: RuntimeCapabilities }>().runtimeCapabilities;
}

/** Every object of loaded the runtime cannot run, on stderr as `The Deployment "web" is invalid: …`; 2 when there is one, else 0. */
export function refuseUnrunnable(loaded: LoadedManifests, capabilities: PodCapabilities, io: Pick<CommandIO, 'stderr'>): number {
  const rules = runtimeObjectRules(capabilities);
  let code = 0;
  const objects: Array<Pod | ManifestObject> = [...loaded.objects, ...loaded.pods.map((p): Pod => ({ ...p, kind: 'Pod' }))];
  for (const o of objects) {
    const errs = rules(o);
    if (errs.length === 0) continue;
    io.stderr.write(`${formatInvalidObject(o.kind ?? 'Pod', o.metadata?.name || (o.metadata?.generateName ?? ''), errs)}\n`);
    code = 2;
  }
  return code;
}

/** The check of the agent of root: 0 when its runtime runs everything (or does not say what it runs), else 2 with every problem said. */
export async function checkAgentRuntime(root: string, loaded: LoadedManifests, io: Pick<CommandIO, 'stderr'>): Promise<number> {
  const caps = await agentRuntimeCapabilities(root);
  return caps ? refuseUnrunnable(loaded, caps, io) : 0;
}

/**
 * The check before an agent is started for the command: against the runtime an agent started with
 * its default flags runs (`--runtime`'s default), so nothing starts for manifests it would refuse.
 * 0 when an agent already runs (checkAgentRuntime judges by its own runtime once it answers).
 */
export async function checkBeforeAgentStart(root: string, loaded: LoadedManifests, io: Pick<CommandIO, 'stderr'>): Promise<number> {
  if (await agentRunning(root)) return 0;
  const runtime = agentFlagSpecs.find((f) => f.name === 'runtime')?.default;
  return typeof runtime === 'string' ? refuseUnrunnable(loaded, declaredCapabilities(runtime), io) : 0;
}
