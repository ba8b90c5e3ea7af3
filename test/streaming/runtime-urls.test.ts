// The runtime's streaming URLs are the requester's alone and short-lived, as the kubelet's streaming
// request cache keeps them: served on a 0600 unix socket in the runtime's state dir (another user cannot
// connect), single-use, expired after a minute, bounded in number, and refused once their container
// stopped or its pod's sandbox was removed.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { connectCriRuntime, type CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { connectRuntimeStream } from '../../src/runtime/cri/stream-client.js';
import { startStreamServer, UNIX_STREAM_SCHEME } from '../../src/runtime/cri/stream-server.js';
import { startProcessRuntimeService } from '../../src/runtime/process/service.js';
import type { ExecSession } from '../../src/runtime/streams.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, sandboxConfig, tempDir } from '../runtime/helpers.js';

const outputOnly = { stdin: false, stdout: true, stderr: true, tty: false };

async function withContainer(fn: (client: CriRuntimeClient, dir: string, sandboxId: string, containerId: string) => Promise<void>) {
  const { dir, cleanup } = tempDir('podvisor-stream-urls-');
  const service = await startProcessRuntimeService({ rootDir: dir, endpoint: `unix://${join(dir, 'runtime.sock')}`, logger: silentLogger });
  const client = await connectCriRuntime({ endpoint: service.server.endpoint, logger: silentLogger });
  try {
    const sbc = sandboxConfig(dir);
    const sb = await client.runPodSandbox(sbc);
    const id = await client.createContainer(sb, containerConfig(['/bin/sh', '-c', 'while true; do sleep 0.2; done']), sbc);
    await client.startContainer(id);
    await fn(client, dir, sb, id);
    await client.stopPodSandbox(sb).catch(() => {});
    await client.removePodSandbox(sb).catch(() => {});
  } finally {
    await client.close();
    await service.close();
    await service.runtime.close();
    cleanup();
  }
}

function output(s: ExecSession): () => string {
  let out = '';
  s.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  s.stderr?.resume();
  return () => out;
}

test('an exec URL is served on a 0600 unix socket of the runtime state dir and serves once', async () => {
  await withContainer(async (client, dir, _sb, id) => {
    const { url } = await client.exec({ containerId: id, cmd: ['/bin/echo', 'once'], ...outputOnly });
    const u = new URL(url);
    assert.equal(u.protocol, UNIX_STREAM_SCHEME);
    const socketPath = decodeURIComponent(u.host);
    assert.equal(socketPath, join(dir, 'runtime', 'streaming.sock'));
    assert.equal(statSync(socketPath).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'runtime')).mode & 0o777, 0o700);
    const s = await connectRuntimeStream(url, outputOnly);
    const out = output(s);
    assert.equal(await s.exit, 0);
    assert.equal(out(), 'once\n');
    await assert.rejects(connectRuntimeStream(url, outputOnly), /unable to upgrade connection: unknown or expired streaming request/);
  });
});

test('a URL of a container that stopped, or whose sandbox was removed, is refused', async () => {
  await withContainer(async (client, dir, _sb, id) => {
    const exec = await client.exec({ containerId: id, cmd: ['/bin/echo', 'late'], ...outputOnly });
    const attach = await client.attach({ containerId: id, ...outputOnly });
    await client.stopContainer(id, 0);
    await assert.rejects(
      connectRuntimeStream(exec.url, outputOnly),
      /unable to upgrade connection: (unknown or expired streaming request|container .* is no longer running)/,
    );
    await assert.rejects(
      connectRuntimeStream(attach.url, outputOnly),
      /unable to upgrade connection: (unknown or expired streaming request|container .* is no longer running)/,
    );

    // The pod deleted: its sandbox and containers removed, a URL asked for just before is refused.
    const sbc = sandboxConfig(dir, 'second');
    const sb2 = await client.runPodSandbox(sbc);
    const id2 = await client.createContainer(sb2, containerConfig(['/bin/sh', '-c', 'while true; do sleep 0.2; done']), sbc);
    await client.startContainer(id2);
    const beforeDelete = await client.exec({ containerId: id2, cmd: ['/bin/echo', 'deleted'], ...outputOnly });
    await client.stopPodSandbox(sb2);
    await client.removePodSandbox(sb2);
    await assert.rejects(
      connectRuntimeStream(beforeDelete.url, outputOnly),
      /unable to upgrade connection: (unknown or expired streaming request|container .* is no longer running)/,
    );
  });
});

test('another user cannot reach the streaming socket', { skip: process.getuid?.() !== 0 && 'needs root to act as another user' }, async () => {
  await withContainer(async (client, _dir, _sb, id) => {
    const { url } = await client.exec({ containerId: id, cmd: ['/bin/echo', 'mine'], ...outputOnly });
    const socketPath = decodeURIComponent(new URL(url).host);
    const script = `require('net').connect(${JSON.stringify(socketPath)}).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); })`;
    const child = spawn(process.execPath, ['-e', script], { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'inherit'] });
    let said = '';
    child.stdout.on('data', (d: Buffer) => (said += d.toString()));
    await new Promise((r) => child.once('close', r));
    assert.equal(said.trim(), 'EACCES');
    // Still the requester's: the URL works for the agent's user.
    const s = await connectRuntimeStream(url, outputOnly);
    const out = output(s);
    assert.equal(await s.exit, 0);
    assert.equal(out(), 'mine\n');
  });
});

test('URLs expire after a minute and are bounded in number (injected clock)', async () => {
  const { dir, cleanup } = tempDir('podvisor-stream-ttl-');
  const clock = new FakeClock(0);
  const server = await startStreamServer(
    {
      exec: () => {
        throw new Error('not reached');
      },
      attach: () => {
        throw new Error('not reached');
      },
      running: () => true,
    },
    { logger: silentLogger, clock, listen: { socketPath: join(dir, 's.sock') } },
  );
  try {
    const req = { containerId: 'c1', cmd: ['true'], ...outputOnly };
    const url = server.execUrl(req);
    await clock.advance(60_001);
    await assert.rejects(connectRuntimeStream(url, outputOnly), /unknown or expired streaming request/);
    for (let i = 0; i < 1000; i++) server.execUrl(req);
    assert.throws(() => server.execUrl(req), /too many pending streaming requests/);
    // Revoked with their container, the pending ones no longer count.
    server.revoke('c1');
    assert.match(server.execUrl({ ...req, containerId: 'c2' }), /\/exec\//);
  } finally {
    await server.close();
    cleanup();
  }
});
