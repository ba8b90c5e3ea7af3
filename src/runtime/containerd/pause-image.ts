// podvisor's own sandbox (pause) image, made without a network or any tool: a static x86-64
// executable of a few bytes that waits in pause(2) forever (containerd ends a sandbox with SIGKILL),
// as the only file of one layer, in a `docker save` archive that `ctr images import` loads. The
// containerd podvisor runs uses it unless --pod-infra-container-image names another (the upstream
// registry.k8s.io/pause where the network allows).

import { createHash } from 'node:crypto';
import { arch } from 'node:os';
import { Readable } from 'node:stream';

/** The image's name in containerd's store (`localhost/…`: no registry is asked for it). */
export const LOCAL_PAUSE_IMAGE = 'localhost/podvisor/pause:1';
/** containerd 1.6's own default sandbox image. */
export const UPSTREAM_PAUSE_IMAGE = 'registry.k8s.io/pause:3.6';

const BASE = 0x400000;
const EHDR = 64;
const PHDR = 56;
/** `loop: mov eax, 34 (pause); syscall; jmp loop` */
const X86_64_CODE = Buffer.from([0xb8, 0x22, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xeb, 0xf7]);

/** A static ELF executable for x86-64 whose one loadable segment is the code. */
export function pauseExecutable(): Buffer {
  const size = EHDR + PHDR + X86_64_CODE.length;
  const b = Buffer.alloc(size);
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0); // ELF, 64-bit, little-endian, version 1, System V
  b.writeUInt16LE(2, 16); // ET_EXEC
  b.writeUInt16LE(0x3e, 18); // EM_X86_64
  b.writeUInt32LE(1, 20);
  b.writeBigUInt64LE(BigInt(BASE + EHDR + PHDR), 24); // e_entry
  b.writeBigUInt64LE(BigInt(EHDR), 32); // e_phoff
  b.writeUInt16LE(EHDR, 52); // e_ehsize
  b.writeUInt16LE(PHDR, 54); // e_phentsize
  b.writeUInt16LE(1, 56); // e_phnum
  b.writeUInt32LE(1, EHDR); // PT_LOAD
  b.writeUInt32LE(5, EHDR + 4); // R|X
  b.writeBigUInt64LE(0n, EHDR + 8);
  b.writeBigUInt64LE(BigInt(BASE), EHDR + 16);
  b.writeBigUInt64LE(BigInt(BASE), EHDR + 24);
  b.writeBigUInt64LE(BigInt(size), EHDR + 32);
  b.writeBigUInt64LE(BigInt(size), EHDR + 40);
  b.writeBigUInt64LE(0x1000n, EHDR + 48);
  X86_64_CODE.copy(b, EHDR + PHDR);
  return b;
}

/** The sandbox image when none is given: podvisor's own where it runs (x86-64), else containerd 1.6's default. */
export function defaultSandboxImage(): string {
  return arch() === 'x64' ? LOCAL_PAUSE_IMAGE : UPSTREAM_PAUSE_IMAGE;
}

/** One regular file as a ustar entry: the 512-byte header, then the content padded to 512 bytes. */
function tarEntry(name: string, content: Buffer, mode: number): Buffer {
  const h = Buffer.alloc(512);
  const field = (value: string, offset: number, length: number) => h.write(value, offset, length, 'ascii');
  const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, '0');
  field(name, 0, 100);
  field(octal(mode, 8), 100, 8);
  field(octal(0, 8), 108, 8);
  field(octal(0, 8), 116, 8);
  field(octal(content.length, 12), 124, 12);
  field(octal(0, 12), 136, 12);
  field('        ', 148, 8);
  field('0', 156, 1);
  field('ustar\u000000', 257, 8);
  let sum = 0;
  for (const byte of h) sum += byte;
  field(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8);
  const pad = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([h, content, pad]);
}

function tar(entries: Array<[string, Buffer, number]>): Buffer {
  return Buffer.concat([...entries.map(([n, c, m]) => tarEntry(n, c, m)), Buffer.alloc(1024)]);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The image as a `docker save` archive (manifest.json, its config, one layer holding /pause). */
export function pauseImageArchive(name = LOCAL_PAUSE_IMAGE): Buffer {
  const layer = tar([['pause', pauseExecutable(), 0o755]]);
  const diffId = sha256(layer);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Entrypoint: ['/pause'] },
      rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] },
      history: [{ created_by: 'podvisor: pause(2) in a loop' }],
    }),
  );
  const configName = `${sha256(config)}.json`;
  const manifest = Buffer.from(JSON.stringify([{ Config: configName, RepoTags: [name], Layers: [`${diffId}/layer.tar`] }]));
  return tar([
    [configName, config, 0o644],
    [`${diffId}/layer.tar`, layer, 0o644],
    ['manifest.json', manifest, 0o644],
  ]);
}

/** The archive as a stream, for the importer. */
export function pauseImageStream(): Readable {
  return Readable.from([pauseImageArchive()]);
}
