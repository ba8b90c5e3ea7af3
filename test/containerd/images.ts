// Test images built from the host's busybox-static with umoci: no outside registry is needed. They
// are built once per set of inputs and kept in a cache directory under the system's temp dir, so
// every test file of a run reuses them; pushing them to a fresh registry then takes milliseconds.
// The `node` image adds the host's own Node binary (at its host path) and the shared libraries it
// links, plus dependency-free HTTP and gRPC health servers under /app.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const BUSYBOX = '/bin/busybox';

/** Tag → umoci config flags, on top of the busybox root filesystem. */
export const IMAGE_CONFIGS: Record<string, string[]> = {
  // The sandbox's pause container.
  pause: ['--config.cmd', 'sleep', '--config.cmd', 'inf'],
  busybox: ['--config.cmd', 'sh'],
  // busybox httpd serving /www on 8080, in the foreground.
  web: [
    '--config.cmd',
    'httpd',
    '--config.cmd',
    '-f',
    '--config.cmd',
    '-p',
    '--config.cmd',
    '8080',
    '--config.cmd',
    '-h',
    '--config.cmd',
    '/www',
    '--config.workingdir',
    '/www',
  ],
  // Prints the arguments it was given, then stays up: shows how entrypoint, cmd, command and args combine.
  entrypoint: [
    '--config.entrypoint',
    'sh',
    '--config.entrypoint',
    '-c',
    '--config.entrypoint',
    'echo "argv: $*"; exec sleep 3600',
    '--config.entrypoint',
    'ep',
    '--config.cmd',
    'img-cmd-1',
    '--config.cmd',
    'img-cmd-2',
    '--config.workingdir',
    '/www',
  ],
};

/** Port the node image's servers listen on (all addresses) unless PORT says otherwise. */
export const NODE_IMAGE_PORT = 8080;

/**
 * A gRPC health service (grpc.health.v1.Health/Check) over plain HTTP/2, with no dependencies:
 * SERVING, or NOT_SERVING while the file $NOT_SERVING_FILE exists; any other method is UNIMPLEMENTED.
 */
const GRPC_HEALTH_JS = `const http2 = require('node:http2');
const fs = require('node:fs');
const port = Number(process.env.PORT || ${NODE_IMAGE_PORT});
const server = http2.createServer();
server.on('stream', (stream, headers) => {
  stream.on('error', () => {});
  if (headers[':path'] !== '/grpc.health.v1.Health/Check') {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12', 'grpc-message': 'unknown method' }, { endStream: true });
    return;
  }
  stream.resume();
  stream.on('end', () => {
    const notServing = process.env.NOT_SERVING_FILE && fs.existsSync(process.env.NOT_SERVING_FILE);
    const message = Buffer.from([0x08, notServing ? 2 : 1]);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame);
  });
});
server.listen(port, '0.0.0.0', () => console.log('grpc health on ' + port));
`;

/** An HTTP server: 200 on /healthz, or 500 while $UNHEALTHY_FILE exists; 404 elsewhere. */
const HTTP_HEALTH_JS = `const http = require('node:http');
const fs = require('node:fs');
const port = Number(process.env.PORT || ${NODE_IMAGE_PORT});
http.createServer((req, res) => {
  if (req.url !== '/healthz') { res.statusCode = 404; res.end('not found'); return; }
  const bad = process.env.UNHEALTHY_FILE && fs.existsSync(process.env.UNHEALTHY_FILE);
  res.statusCode = bad ? 500 : 200;
  res.end(bad ? 'unhealthy' : 'ok');
}).listen(port, '0.0.0.0', () => console.log('http on ' + port));
`;

const BUILD_VERSION = '2';

/** The shared libraries (and loader) the host's node binary links, as ldd lists them. */
async function nodeLibraries(): Promise<string[]> {
  const { stdout } = await run('ldd', [process.execPath]);
  return [...stdout.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
}

async function copyInto(root: string, file: string): Promise<void> {
  mkdirSync(join(root, dirname(file)), { recursive: true });
  await run('cp', ['-L', '--preserve=mode', file, join(root, file)]);
}

/** Builds (or reuses) the OCI layout holding every test image; returns its path. */
export async function buildTestImages(): Promise<string> {
  const st = statSync(BUSYBOX);
  const nodeSt = statSync(process.execPath);
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        v: BUILD_VERSION,
        IMAGE_CONFIGS,
        size: st.size,
        mtime: st.mtimeMs,
        node: [process.execPath, nodeSt.size, nodeSt.mtimeMs],
        GRPC_HEALTH_JS,
        HTTP_HEALTH_JS,
      }),
    )
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

    // node: a second layer on the busybox root filesystem.
    const nodeRoot = join(work, 'node-root');
    for (const f of [process.execPath, ...(await nodeLibraries())]) await copyInto(nodeRoot, f);
    mkdirSync(join(nodeRoot, 'app'));
    writeFileSync(join(nodeRoot, 'app', 'grpc-health.js'), GRPC_HEALTH_JS);
    writeFileSync(join(nodeRoot, 'app', 'http-health.js'), HTTP_HEALTH_JS);
    await run('umoci', ['insert', '--image', `${layout}:rootfs`, '--tag', 'node-layer', nodeRoot, '/']);
    await run('umoci', [
      'config',
      '--image',
      `${layout}:node-layer`,
      '--tag',
      'node',
      '--config.env',
      `PATH=/bin:${dirname(process.execPath)}`,
      '--config.cmd',
      process.execPath,
      '--config.cmd',
      '/app/grpc-health.js',
      '--config.workingdir',
      '/app',
    ]);
    rmSync(nodeRoot, { recursive: true, force: true });
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
