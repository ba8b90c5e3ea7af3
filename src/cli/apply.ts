// `podvisor apply -f FILE...`: kubectl apply against the agent of the root dir (started on demand):
// each Pod, ConfigMap and Secret is created, or replaced where the API server's update rules allow,
// and printed as `pod/web created|configured|unchanged`.

import { defaultNodeName } from '../config/load.js';
import { defineCommand, usageFailure, type CommandIO, type ParsedArgs } from './args.js';
import { ensureAgent } from './agent-client.js';
import { applyObjects } from './apply-objects.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';
import { loadFlaggedManifests, manifestFlags, noFilenameMessage } from './validate.js';

export const applyCommand = defineCommand({
  name: 'apply',
  summary: 'Create or update pods, ConfigMaps and Secrets on the agent, as kubectl apply',
  usage: 'podvisor apply -f FILENAME... [flags]',
  description:
    'Create the objects of the manifests on the agent of the root dir, or update those that exist\n' +
    '(a live pod may change only its images, activeDeadlineSeconds and metadata, as on a cluster).\n' +
    'ConfigMaps and Secrets are applied before the pods that reference them. The agent is started\n' +
    '(with its default flags) when none runs for the root dir. Unlike `up -d`, apply does not wait.',
  examples: ['podvisor apply -f web.yaml', 'podvisor apply -f manifests/ -R'],
  flags: [...manifestFlags, rootDirFlag],
  run: apply,
});

async function apply(parsed: ParsedArgs, io: CommandIO): Promise<number> {
  const files = parsed.flags.filename as string[];
  if (files.length === 0) return usageFailure(io, noFilenameMessage, 'apply');
  const root = rootDirOf(parsed, io);
  const loaded = await loadFlaggedManifests(files, parsed, io, { nodeName: defaultNodeName() });
  if (typeof loaded === 'number') return loaded;
  try {
    const { started } = await ensureAgent(root, []);
    if (started) io.stderr.write(`started the podvisor agent for ${root} (log: ${root}/agent.log)\n`);
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  return (await applyObjects(root, loaded, io)).code;
}
