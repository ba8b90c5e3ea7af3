// `podvisor images`: the images the container runtime holds, as `crictl images` lists them
// (IMAGE, TAG, IMAGE ID, SIZE), or as JSON.

import type { Image, ImageService } from '../runtime/cri.js';
import { streamLogger } from '../util/logger.js';
import { agentSettings } from './agent-flags.js';
import { defineCommand } from './args.js';
import { tabwriteRows } from '../printers/tabwriter.js';

/** docker/go-units HumanSize: decimal units, 4 significant digits. */
export function humanSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = bytes;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${Number(v.toPrecision(4))}${units[i]}`;
}

/** One row per repo tag (an untagged image shows `<none>`), as crictl prints them. */
export function imageRows(images: Image[]): string[][] {
  const rows: string[][] = [];
  for (const img of images) {
    const id = img.id.replace(/^sha256:/, '').slice(0, 13);
    const size = humanSize(img.size);
    const tags = img.repoTags.length ? img.repoTags : [`${(img.repoDigests[0] ?? '<none>').split('@')[0]}:<none>`];
    for (const t of tags) {
      const colon = t.lastIndexOf(':');
      rows.push([t.slice(0, colon), t.slice(colon + 1), id, size]);
    }
  }
  return rows.sort((a, b) => a[0]!.localeCompare(b[0]!) || a[1]!.localeCompare(b[1]!));
}

export function formatTable(header: string[], rows: string[][]): string {
  return tabwriteRows([header, ...rows], { minwidth: 0, padding: 3 });
}

export const imagesCommand = defineCommand({
  name: 'images',
  summary: 'List the images the container runtime holds',
  usage: 'podvisor images [flags]',
  description: 'List the images of the container runtime (--runtime=containerd), as crictl images does.',
  examples: ['podvisor images --runtime=containerd', 'podvisor images --runtime=containerd -o json'],
  flags: [
    {
      name: 'runtime',
      type: 'string',
      default: 'containerd',
      valueName: 'NAME',
      usage: 'Container runtime whose images to list (only containerd has images).',
    },
    { name: 'container-runtime-endpoint', type: 'string', valueName: 'ENDPOINT', usage: 'CRI endpoint (default unix:///run/containerd/containerd.sock).' },
    { name: 'output', short: 'o', type: 'string', values: ['table', 'json'], default: 'table', usage: 'Output format.' },
  ],
  async run(parsed, io) {
    const settings = agentSettings(parsed, io);
    const { CriRuntimeClient } = await import('../runtime/cri/client.js');
    const client = new CriRuntimeClient({ endpoint: settings.runtimeEndpoint, logger: streamLogger(io.stderr, 'warn') });
    let images: Image[];
    try {
      images = await (client.images as ImageService).listImages();
    } catch (err) {
      io.stderr.write(`error: cannot list images at ${settings.runtimeEndpoint}: ${(err as Error).message}\n`);
      return 1;
    } finally {
      await client.close();
    }
    if (parsed.flags.output === 'json') io.stdout.write(`${JSON.stringify({ images }, null, 2)}\n`);
    else io.stdout.write(formatTable(['IMAGE', 'TAG', 'IMAGE ID', 'SIZE'], imageRows(images)));
    return 0;
  },
});
