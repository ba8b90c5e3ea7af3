// What `run` and `up` share in the command line: the manifests loaded and checked, then the
// in-process agent (src/agent/in-process.ts) started for them, each failure said on stderr with its
// exit code; and a Pod as they print it.

import type { Pod, PodStatus } from '../api/types.js';
import { startInProcessAgent, type InProcessAgent } from '../agent/in-process.js';
import type { AgentSettings } from '../agent/settings.js';
import { defaultNodeName, type LoadedManifests } from '../config/load.js';
import type { CommandIO, ParsedArgs } from './args.js';
import { podvisorExecutable } from './executable.js';
import { warnUnhonoured } from './output.js';
import { declaredCapabilities } from '../runtime/pod-rules.js';
import { loadFlaggedManifests } from './validate.js';

/**
 * What `run` and `up` do before any pod starts: load, default and validate every manifest (all
 * errors at once, exit 2), then start the agent (exit 1 if that fails). Returns the exit code when
 * either step failed.
 */
export async function loadAndStartAgent(
  files: string[],
  parsed: ParsedArgs,
  io: CommandIO,
  settings: AgentSettings,
  command = 'run',
): Promise<{ agent: InProcessAgent; loaded: LoadedManifests } | number> {
  const loaded = await loadForAgent(files, parsed, io, settings);
  if (typeof loaded === 'number') return loaded;
  return startAgentFor(loaded, io, settings, command);
}

/** The manifests of -f, loaded with the rules of the runtime the settings name; the exit code (2) when they are invalid. */
export async function loadForAgent(files: string[], parsed: ParsedArgs, io: CommandIO, settings: AgentSettings): Promise<LoadedManifests | number> {
  const loaded = await loadFlaggedManifests(files, parsed, io, { runtime: settings.runtime, nodeName: defaultNodeName() });
  if (typeof loaded === 'number') return loaded;
  // Only a runtime of host processes leaves fields unhonoured; containerd runs them as a kubelet does.
  // Workloads go through the agent's API, whose Warning headers say the same of their templates.
  warnUnhonoured(needsAgentAPI(loaded) ? [] : loaded.pods, declaredCapabilities(settings.runtime), io.stderr);
  return loaded;
}

/** Starts the in-process agent for loaded pods; exit code 1 (said on stderr) when it cannot start. */
export async function startAgentFor(
  loaded: LoadedManifests,
  io: CommandIO,
  settings: AgentSettings,
  command: string,
): Promise<{ agent: InProcessAgent; loaded: LoadedManifests } | number> {
  try {
    const agent = await startInProcessAgent({
      settings,
      lookup: loaded,
      nodeName: defaultNodeName(),
      podvisorScript: podvisorExecutable(),
      stderr: io.stderr,
      pods: loaded.pods,
      command,
    });
    return { agent, loaded };
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

/** Whether manifests hold kinds only the agent's controllers and API run (Services, workloads): `run` and `up` then go through the agent. */
export function needsAgentAPI(loaded: LoadedManifests): boolean {
  return loaded.objects.length > 0;
}

/** A Pod as `kubectl get -o json` shows it: apiVersion, kind, and its status. */
export function podWithStatus(pod: Pod, status: PodStatus | undefined): Pod {
  return { ...pod, apiVersion: 'v1', kind: 'Pod', ...(status ? { status } : {}) };
}
