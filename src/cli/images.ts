// The images the container runtime holds as `crictl images` lists them (IMAGE, TAG, IMAGE ID, SIZE):
// the rows and the table of `podvisor image ls` and `podvisor images`.

import type { Image } from '../runtime/cri.js';
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
