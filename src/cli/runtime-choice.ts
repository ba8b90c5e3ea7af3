// `up -f`/`run -f` without --runtime: the runtime chosen from the manifests and the host
// (src/agent/runtime-choice.ts), said in one line on stderr and set as if --runtime had been given,
// so that the agent started for them (in process, or `up -d`'s) runs it.

import { chooseRuntime, manifestContainers } from '../agent/runtime-choice.js';
import type { CommandIO, ParsedArgs } from './args.js';
import { rootDirOf } from './root-flag.js';
import { loadNamedManifests } from './validate.js';

/**
 * Chooses the runtime when the command line names none (nor an endpoint) and the manifests are files
 * (standard input can be read once only: it keeps the default), unless an agent already serves the
 * root dir (its runtime is the one there is).
 */
export async function chooseRuntimeFor(files: readonly string[], parsed: ParsedArgs, io: CommandIO): Promise<void> {
  if (parsed.given.has('runtime') || parsed.given.has('container-runtime-endpoint') || files.includes('-')) return;
  let loaded;
  try {
    const { agentRunning } = await import('./agent-client.js');
    if (await agentRunning(rootDirOf(parsed, io))) return;
    loaded = await loadNamedManifests(files, parsed, io);
  } catch {
    return; // the load that follows reports it
  }
  const { managedContainerdProblems } = await import('../runtime/containerd/host.js');
  const choice = chooseRuntime(
    manifestContainers(loaded.pods, loaded.objects),
    managedContainerdProblems(io.env).map((p) => `${p.what} (${p.fix})`),
  );
  if (!choice) return;
  io.stderr.write(`runtime: ${choice.runtime} (${choice.why})\n`);
  if (choice.runtime !== 'process') {
    parsed.flags.runtime = choice.runtime;
    parsed.given.add('runtime');
  }
}
