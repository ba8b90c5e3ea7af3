// Images loaded into containerd without a registry, as `ctr images import` (Debian's containerd
// package ships ctr) loads a `docker save` tarball or an OCI archive into the CRI plugin's namespace
// (k8s.io), unpacked for its snapshotter, so that pods with imagePullPolicy IfNotPresent or Never
// find them.

import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { onPath } from './host.js';

/** containerd's namespace of the CRI plugin, where the kubelet's images live. */
export const CRI_NAMESPACE = 'k8s.io';

/**
 * Imports the archive read from input into the containerd at socket; resolves to the names of the
 * images it held. The error carries ctr's own message (a file that is not an image archive, …).
 */
export async function importImageArchive(socket: string, input: Readable): Promise<string[]> {
  const ctr = onPath('ctr');
  if (!ctr) throw new Error('ctr is not on PATH (it comes with containerd: apt-get install containerd)');
  const child = spawn(ctr, ['--address', socket, '--namespace', CRI_NAMESPACE, 'images', 'import', '--digests', '--skip-digest-for-named', '-'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  input.on('error', () => child.stdin.destroy());
  child.stdin.on('error', () => undefined);
  input.pipe(child.stdin);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error((err.trim() || out.trim() || `ctr exited with ${String(code)}`).replace(/^ctr: /, ''));
  // ctr says `unpacking <name> (sha256:…)...done` for each image.
  return [...out.matchAll(/^unpacking (\S+) \(sha256:[0-9a-f]+\)/gm)].map((m) => m[1]!).filter((n) => !n.includes('@sha256:'));
}
