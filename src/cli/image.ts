// `podvisor image load|ls|rm|pull`: the images of containerd (the one podvisor runs for the root dir,
// or the one at --container-runtime-endpoint), as `docker load`, `crictl images`, `crictl rmi` and
// `crictl pull` handle them. A containerd of the root dir that is not running is started for the
// command and stopped again afterwards; what it loaded stays in its store for the pods.

import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { agentSettingsOf, InvalidSettingError, type AgentSettings } from '../agent/settings.js';
import type { ImageService } from '../runtime/cri.js';
import { streamLogger, type Logger } from '../util/logger.js';
import { defineCommand, usageFailure, UsageError, type Command, type CommandIO, type FlagSpec, type ParsedArgs } from './args.js';
import { agentFlagSpecs } from './agent-flags.js';
import { formatTable, imageRows } from './images.js';

const connectionFlags: FlagSpec[] = agentFlagSpecs.filter((f) => ['container-runtime-endpoint', 'root-dir', 'registry-config'].includes(f.name));

/** The settings of containerd for the image commands (the runtime is containerd whatever --runtime says). */
function containerdSettings(parsed: ParsedArgs, io: CommandIO): AgentSettings {
  try {
    return agentSettingsOf({ ...parsed.flags, runtime: 'containerd' }, io);
  } catch (err) {
    if (err instanceof InvalidSettingError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * Runs use with the image service of the containerd the settings name, and with its socket path; a
 * containerd of the root dir is started first when it does not run, and stopped again after.
 */
async function withImages<T>(settings: AgentSettings, logger: Logger, use: (images: ImageService, socket: string) => Promise<T>): Promise<T> {
  const socket = settings.runtimeEndpoint.replace(/^unix:\/\//, '');
  if (settings.managedContainerd) {
    const m = await import('../runtime/containerd/managed.js');
    const { client, startedPid } = await m.connectManagedContainerd(settings.managedContainerd, { logger });
    try {
      return await use(client.images, socket);
    } finally {
      await client.close();
      if (startedPid) await m.stopIdleManagedContainerd(settings.rootDir, logger);
    }
  }
  const { CriRuntimeClient } = await import('../runtime/cri/client.js');
  const client = new CriRuntimeClient({ endpoint: settings.runtimeEndpoint, logger });
  try {
    return await use(client.images, socket);
  } finally {
    await client.close();
  }
}

/** The command's body with settings read (exit 2 on a usage error) and failures said as `error: …` (exit 1). */
async function imageAction(
  parsed: ParsedArgs,
  io: CommandIO,
  name: string,
  action: (settings: AgentSettings, logger: Logger) => Promise<number>,
): Promise<number> {
  let settings: AgentSettings;
  try {
    settings = containerdSettings(parsed, io);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, name);
    throw err;
  }
  try {
    return await action(settings, streamLogger(io.stderr, 'error'));
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message.split('\n')[0]}\n`);
    return 1;
  }
}

const loadCommand = defineCommand({
  name: 'image load',
  summary: 'Load images from a docker save tarball or an OCI archive',
  usage: 'podvisor image load [-i FILE|-] [--root-dir DIR]',
  description:
    'Load the images of a tar archive (docker save, or an OCI image layout archive) from FILE or standard\n' +
    "input into containerd's store, where pods find them without a registry (imagePullPolicy IfNotPresent\n" +
    'or Never; an image whose tag is latest is pulled by default, as on a kubelet). Prints each image loaded.',
  examples: [
    'docker save app:dev | podvisor image load',
    'podvisor image load -i app.tar',
    'skopeo copy oci:layout:app oci-archive:app.tar && podvisor image load -i app.tar',
  ],
  flags: [
    { name: 'input', short: 'i', type: 'string', valueName: 'FILE', usage: 'Read from FILE instead of standard input (- is standard input).' },
    ...connectionFlags,
  ],
  run: (parsed, io) =>
    imageAction(parsed, io, 'image load', async (settings, logger) => {
      const file = parsed.flags.input as string | undefined;
      const input: Readable = file && file !== '-' ? createReadStream(resolve(io.cwd, file)) : (io.stdin as Readable);
      if (file && file !== '-') await new Promise<void>((ok, fail) => input.once('open', () => ok()).once('error', fail));
      const { importImageArchive } = await import('../runtime/containerd/import.js');
      const names = await withImages(settings, logger, (_images, socket) => importImageArchive(socket, input));
      for (const n of names) io.stdout.write(`Loaded image: ${n}\n`);
      if (!names.length) io.stderr.write('the archive holds no named image\n');
      return 0;
    }),
});

const lsCommand = defineCommand({
  name: 'image ls',
  summary: 'List the images in containerd',
  usage: 'podvisor image ls [-o table|json] [--root-dir DIR]',
  description: "List containerd's images as crictl images does: IMAGE, TAG, IMAGE ID, SIZE.",
  examples: ['podvisor image ls', 'podvisor image ls -o json'],
  flags: [{ name: 'output', short: 'o', type: 'string', values: ['table', 'json'], default: 'table', usage: 'Output format.' }, ...connectionFlags],
  run: (parsed, io) =>
    imageAction(parsed, io, 'image ls', async (settings, logger) => {
      const images = await withImages(settings, logger, (svc) => svc.listImages());
      if (parsed.flags.output === 'json') io.stdout.write(`${JSON.stringify({ images }, null, 2)}\n`);
      else io.stdout.write(formatTable(['IMAGE', 'TAG', 'IMAGE ID', 'SIZE'], imageRows(images)));
      return 0;
    }),
});

const rmCommand = defineCommand({
  name: 'image rm',
  summary: 'Remove images from containerd',
  usage: 'podvisor image rm IMAGE... [--root-dir DIR]',
  description: 'Remove each image named (by reference or id) from containerd, as crictl rmi does. Exit 1 if one is not there.',
  examples: ['podvisor image rm app:dev'],
  flags: connectionFlags,
  checkArgs: (args) => (args.length ? undefined : 'give at least one image'),
  run: (parsed, io) =>
    imageAction(parsed, io, 'image rm', (settings, logger) =>
      withImages(settings, logger, async (svc) => {
        let code = 0;
        for (const ref of parsed.args) {
          const found = await svc.imageStatus({ image: ref });
          if (!found) {
            io.stderr.write(`error: no such image: ${ref}\n`);
            code = 1;
            continue;
          }
          await svc.removeImage({ image: found.id });
          io.stdout.write(`Deleted: ${[...found.repoTags, ...found.repoDigests].join(', ') || found.id}\n`);
        }
        return code;
      }),
    ),
});

const pullCommand = defineCommand({
  name: 'image pull',
  summary: 'Pull an image into containerd',
  usage: 'podvisor image pull IMAGE [--creds USER:PASSWORD] [--root-dir DIR]',
  description:
    'Pull an image into containerd as the kubelet pulls it (registries on localhost over plain HTTP; others as\n' +
    "--registry-config says), and print its id. The registry's own message is the error when it fails.",
  examples: ['podvisor image pull 127.0.0.1:5000/app:1', 'podvisor image pull registry.example/app:1 --creds me:secret'],
  flags: [{ name: 'creds', type: 'string', valueName: 'USER:PASSWORD', usage: 'Credentials for the registry.' }, ...connectionFlags],
  checkArgs: (args) => (args.length === 1 ? undefined : 'give one image'),
  run: (parsed, io) =>
    imageAction(parsed, io, 'image pull', async (settings, logger) => {
      const creds = parsed.flags.creds as string | undefined;
      const colon = creds?.indexOf(':') ?? -1;
      const auth = creds ? { username: colon >= 0 ? creds.slice(0, colon) : creds, password: colon >= 0 ? creds.slice(colon + 1) : '' } : undefined;
      const ref = await withImages(settings, logger, (svc) => svc.pullImage({ image: parsed.args[0]! }, auth));
      io.stdout.write(`Image is up to date for ${ref}\n`);
      return 0;
    }),
});

/** `podvisor images`: `image ls` under the name crictl and docker give it (--runtime can only be containerd). */
export const imagesCommand = defineCommand({
  name: 'images',
  summary: 'List the images the container runtime holds',
  usage: 'podvisor images [-o table|json] [--root-dir DIR]',
  description: lsCommand.definition.description,
  examples: ['podvisor images', 'podvisor images --runtime=containerd -o json'],
  flags: [
    {
      name: 'runtime',
      type: 'string',
      values: ['containerd'],
      default: 'containerd',
      valueName: 'NAME',
      usage: 'Container runtime whose images to list (only containerd has images).',
    },
    ...lsCommand.definition.flags,
  ],
  run: (parsed, io) => lsCommand.definition.run(parsed, io),
});

const subcommands: Command[] = [loadCommand, lsCommand, rmCommand, pullCommand];

export const imageCommand: Command = {
  name: 'image',
  summary: 'Load, list, remove and pull the images of containerd',
  async run(argv: string[], io: CommandIO) {
    const sub = subcommands.find((c) => c.name === `image ${argv[0]}`);
    if (sub) return sub.run(argv.slice(1), io);
    if (argv[0] === undefined || argv[0] === '--help' || argv[0] === '-h') {
      io.stdout.write(
        `Load, list, remove and pull the images of containerd (the one podvisor runs for the root dir, or --container-runtime-endpoint).\n\nUsage:\n  podvisor image COMMAND [flags]\n\nCommands:\n${subcommands.map((c) => `  ${c.name.slice(6).padEnd(6)} ${c.summary}`).join('\n')}\n`,
      );
      return argv[0] === undefined ? 2 : 0;
    }
    return usageFailure(io, `unknown command "${argv[0]}" for "podvisor image"`, 'image');
  },
};
