// Test images built from the host's busybox-static with umoci: no outside registry is needed. They
// are built once per set of inputs and kept in a cache directory under the system's temp dir, so
// every test file of a run reuses them; pushing them to a fresh registry then takes milliseconds.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const BUSYBOX = '/bin/busybox';

/** Tag → umoci config flags, on top of the busybox root filesystem. */
export const IMAGE_CONFIGS: Record<string, string[]> = {
  // The sandbox's pause container.
  pause: ['--config.cmd', 'sleep', '--config.cmd', 'inf'],
  busybox: ['--config.cmd', 'sh'],
  // busybox httpd serving /www on 8080, in the foreground.
  web: ['--config.cmd', 'httpd', '--config.cmd', '-f', '--config.cmd', '-p', '--config.cmd', '8080', '--config.cmd', '-h', '--config.cmd', '/www', '--config.workingdir', '/www'],
  // Prints the arguments it was given, then stays up: shows how entrypoint, cmd, command and args combine.
  entrypoint: [
    '--config.entrypoint', 'sh', '--config.entrypoint', '-c', '--config.entrypoint', 'echo "argv: $*"; exec sleep 3600', '--config.entrypoint', 'ep',
    '--config.cmd', 'img-cmd-1', '--config.cmd', 'img-cmd-2',
    '--config.workingdir', '/www',
  ],
};

const BUILD_VERSION = '1';

/** Builds (or reuses) the OCI layout holding every test image; returns its path. */
export async function buildTestImages(): Promise<string> {
  const st = statSync(BUSYBOX);
  const key = createHash('sha256')
    .update(JSON.stringify({ v: BUILD_VERSION, IMAGE_CONFIGS, size: st.size, mtime: st.mtimeMs }))
    .digest('hex')
    .slice(0, 16);
  const cache = join(tmpdir(), `podvisor-test-images-${key}`);
  if (existsSync(join(cache, 'done'))) return join(cache, 'layout');

  const work = mkdtempSync(join(tmpdir(), 'podvisor-img-build-'));
  try {
    const rootfs = join(work, 'rootfs');
    for (const d of ['bin', 'etc', 'tmp', 'www', 'proc', 'sys', 'dev', 'root', 'data']) mkdirSync(join(rootfs, d), { recursive: true });
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    const { stdout } = await run(BUSYBOX, ['--list']);
    await run('cp', ['--preserve=mode', BUSYBOX, join(rootfs, 'bin', 'busybox')]);
    for (const applet of stdout.split('\n').map((s) => s.trim())) {
      if (applet && applet !== 'busybox') symlinkSync('busybox', join(rootfs, 'bin', applet));
    }
    writeFileSync(join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n');
    writeFileSync(join(rootfs, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
    writeFileSync(join(rootfs, 'www', 'index.html'), 'hello-from-pod\n');

    const layout = join(work, 'layout');
    await run('umoci', ['init', '--layout', layout]);
    await run('umoci', ['new', '--image', `${layout}:base`]);
    await run('umoci', ['insert', '--image', `${layout}:base`, '--tag', 'rootfs', rootfs, '/']);
    for (const [tag, flags] of Object.entries(IMAGE_CONFIGS)) {
      await run('umoci', ['config', '--image', `${layout}:rootfs`, '--tag', tag, '--config.env', 'PATH=/bin', ...flags]);
    }
    rmSync(rootfs, { recursive: true, force: true });
    writeFileSync(join(work, 'done'), '');
    try {
      renameSync(work, cache);
    } catch {
      // Another test file built the same images first: use theirs.
      rmSync(work, { recursive: true, force: true });
    }
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
  return join(cache, 'layout');
}

/** Copies tag from the layout to `<registry>/podvisor-test/<tag>:v1`; returns that reference. */
export async function pushImage(layout: string, tag: string, registry: string): Promise<string> {
  const ref = `${registry}/podvisor-test/${tag}:v1`;
  await run('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', `oci:${layout}:${tag}`, `docker://${ref}`]);
  return ref;
}
