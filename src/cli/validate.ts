// `podvisor validate`: loads manifests exactly as `run` would (decoding, defaults, validation) and
// reports the result without starting anything.

import { defineCommand, usageFailure, type CommandIO, type FlagSpec, type ParsedArgs } from './args.js';
import { defaultNodeName, loadManifests, validateModes, type LoadedManifests, type LoadOptions, type ValidateMode } from '../config/load.js';
import { formatObjects, outputFormats, reportLoadError, warnUnhonoured, type OutputFormat } from './output.js';
import { declaredCapabilities, runtimePodRules } from '../runtime/pod-rules.js';
import { qualifiedName } from '../config/object-kinds.js';
import { sharedPortWarnings } from '../controllers/replica-ports.js';

/** The -f/--validate flags every command that reads manifests shares. */
export const manifestFlags: FlagSpec[] = [
  { name: 'filename', short: 'f', type: 'strings', valueName: 'FILE', usage: 'File, directory or - (stdin) holding the manifests; repeatable.', default: [] },
  { name: 'recursive', short: 'R', type: 'boolean', usage: 'Process the directories given with -f recursively.' },
  {
    name: 'validate',
    type: 'string',
    values: [...validateModes],
    default: 'strict',
    usage: 'How to treat unknown fields: strict rejects them, warn prints a warning, ignore drops them.',
  },
];

/**
 * Loads the manifests of the manifest flags (-R, --validate; warnings on stderr) with what the command
 * adds; a load failure is reported on stderr and its exit code (2) returned instead.
 */
export async function loadFlaggedManifests(
  files: readonly string[],
  parsed: ParsedArgs,
  io: CommandIO,
  { runtime, ...opts }: Pick<LoadOptions, 'nodeName' | 'namespace'> & { runtime?: string },
): Promise<LoadedManifests | number> {
  try {
    return await loadManifests(files, {
      stdin: () => io.stdin,
      cwd: io.cwd,
      validate: parsed.flags.validate as ValidateMode,
      recursive: parsed.flags.recursive === true,
      onWarning: (msg) => io.stderr.write(`Warning: ${msg}\n`),
      // --runtime: the rules of that runtime, on pods and workload templates alike.
      ...(runtime ? { extraValidation: runtimePodRules(declaredCapabilities(runtime)) } : {}),
      ...opts,
    });
  } catch (err) {
    return reportLoadError(err, io.stderr);
  }
}

/**
 * The objects the manifests of -f (and -R) name, read without validation: what `delete`, `down` and
 * `wait` act on by namespace and name. Throws what the loader throws (see reportLoadError).
 */
export function loadNamedManifests(files: readonly string[], parsed: ParsedArgs, io: CommandIO): Promise<LoadedManifests> {
  return loadManifests(files, {
    stdin: () => io.stdin,
    cwd: io.cwd,
    validate: 'ignore',
    recursive: parsed.flags.recursive === true,
    nodeName: defaultNodeName(),
  });
}

/** The usage error of a command that reads manifests and was given none. */
export const noFilenameMessage = 'must specify at least one manifest with -f/--filename (a file, a directory or - for stdin)';

/** kubectl's -n/--namespace, for commands that read manifests. */
export const namespaceFlag: FlagSpec = {
  name: 'namespace',
  short: 'n',
  type: 'string',
  usage: 'Namespace for objects that name none; objects naming another namespace are rejected.',
};

export const validateCommand = defineCommand({
  name: 'validate',
  summary: 'Check manifests as the API server would, without running anything',
  usage: 'podvisor validate -f FILENAME... [flags]',
  description:
    'Read manifests (Pods, ConfigMaps, Secrets, Services, Deployments, ReplicaSets, StatefulSets,\n' +
    "DaemonSets, Jobs, CronJobs, in any order), apply the API server's defaults and validation, and\n" +
    'report every problem at once. Nothing is started.',
  examples: ['podvisor validate -f examples/web.yaml', 'podvisor validate -f examples/ -o yaml', 'cat pod.yaml | podvisor validate -f -'],
  flags: [
    ...manifestFlags,
    {
      name: 'runtime',
      type: 'string',
      values: ['process', 'containerd', 'process,containerd'],
      usage: "Also apply this runtime's restrictions (process,containerd: each pod's, by its RuntimeClass).",
    },
    namespaceFlag,
    { name: 'output', short: 'o', type: 'string', values: [...outputFormats], usage: 'Print the defaulted objects instead of a summary.' },
    { name: 'node-name', type: 'string', usage: "Node name to default spec.nodeName to (default: this host's name)." },
  ],
  async run(parsed, io) {
    const files = parsed.flags.filename as string[];
    if (files.length === 0) return usageFailure(io, noFilenameMessage, 'validate');
    const loaded = await loadFlaggedManifests(files, parsed, io, {
      ...(parsed.flags.runtime ? { runtime: parsed.flags.runtime as string } : {}),
      ...(parsed.flags.namespace ? { namespace: parsed.flags.namespace as string } : {}),
      ...(parsed.flags['node-name'] ? { nodeName: parsed.flags['node-name'] as string } : {}),
    });
    if (typeof loaded === 'number') return loaded;
    if (parsed.flags.runtime) warnUnhonoured([...loaded.pods, ...loaded.objects], declaredCapabilities(parsed.flags.runtime as string), io.stderr);
    if (parsed.flags.runtime !== 'containerd') for (const w of sharedPortWarnings(loaded.objects)) io.stderr.write(`Warning: ${w}\n`);
    const output = parsed.flags.output as OutputFormat | undefined;
    if (output) {
      io.stdout.write(formatObjects([...loaded.configMaps, ...loaded.secrets, ...loaded.objects, ...loaded.pods], output));
      return 0;
    }
    for (const cm of loaded.configMaps) io.stdout.write(`${qualifiedName({ kind: 'ConfigMap', ...cm })} validated\n`);
    for (const s of loaded.secrets) io.stdout.write(`${qualifiedName({ kind: 'Secret', ...s })} validated\n`);
    for (const obj of loaded.objects) io.stdout.write(`${qualifiedName(obj)} validated\n`);
    for (const pod of loaded.pods) io.stdout.write(`pod/${pod.metadata?.name} validated\n`);
    return 0;
  },
});
