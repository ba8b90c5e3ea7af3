// CRI Exec and Attach on the process runtime service, as a generic CRI client uses them: the call
// answers a one-time URL of the service's streaming server, which the stream client upgrades to SPDY
// (stdin closed at its end, stdout, stderr, exit codes, attach to a container's output); requests
// containerd rejects are rejected with the same codes; PortForward says why it is not served.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { NotFoundError } from '../../src/runtime/cri.js';
import { CriError, connectCriRuntime, type CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { connectRuntimeStream } from '../../src/runtime/cri/stream-client.js';
import type { ExecSession } from '../../src/runtime/streams.js';
import { startProcessRuntimeService } from '../../src/runtime/process/service.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, sandboxConfig, tempDir, waitFor } from './helpers.js';

async function withService(fn: (client: CriRuntimeClient, sandboxId: string, containerId: string) => Promise<void>) {
  const { dir, cleanup } = tempDir('podvisor-cri-stream-');
  const service = await startProcessRuntimeService({ rootDir: dir, endpoint: `unix://${join(dir, 'runtime.sock')}`, logger: silentLogger });
  const client = await connectCriRuntime({ endpoint: service.server.endpoint, logger: silentLogger });
  try {
    const sbc = sandboxConfig(dir);
    const sb = await client.runPodSandbox(sbc);
    const script = 'i=0; while true; do echo tick $i; echo tock $i >&2; i=$((i+1)); sleep 0.2; done';
    const id = await client.createContainer(sb, containerConfig(['/bin/sh', '-c', script], { envs: [{ key: 'GREETING', value: 'hello' }] }), sbc);
    await client.startContainer(id);
    await fn(client, sb, id);
    await client.stopPodSandbox(sb);
    await client.removePodSandbox(sb);
  } finally {
    await client.close();
    await service.close();
    await service.runtime.close();
    cleanup();
  }
}

function collect(s: ExecSession): { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  s.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  s.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return { out: () => out, err: () => err };
}

const codeOf = (err: unknown) => (err instanceof CriError ? err.code : undefined);

test('CRI Exec on the process runtime: a URL whose stream carries stdin, stdout, stderr and the exit code', async () => {
  await withService(async (client, _sb, id) => {
    const { url } = await client.exec({
      containerId: id,
      cmd: ['/bin/sh', '-c', 'cat; echo "$GREETING" >&2; exit 9'],
      tty: false,
      stdin: true,
      stdout: true,
      stderr: true,
    });
    assert.match(url, /^http\+unix:\/\/%2F[^/]+streaming\.sock\/exec\/[A-Za-z0-9_-]+$/);
    const s = await connectRuntimeStream(url, { stdin: true, stdout: true, stderr: true, tty: false });
    const io = collect(s);
    const big = 'x'.repeat(200_000);
    s.stdin!.end(`${big}\n`);
    assert.equal(await s.exit, 9);
    assert.equal(io.out(), `${big}\n`);
    assert.equal(io.err(), 'hello\n');

    // A URL serves once.
    await assert.rejects(
      connectRuntimeStream(url, { stdin: true, stdout: true, stderr: true, tty: false }),
      /unable to upgrade connection: unknown or expired/,
    );

    // A terminal request with stdout only: the output comes through the terminal (CR LF line ends).
    const t = await client.exec({ containerId: id, cmd: ['/bin/echo', 'fine'], tty: true, stdin: false, stdout: true, stderr: false });
    const ts = await connectRuntimeStream(t.url, { stdin: false, stdout: true, stderr: false, tty: true });
    const tio = collect(ts);
    ts.resize(80, 24);
    assert.equal(await ts.exit, 0);
    assert.equal(tio.out(), 'fine\r\n');

    // A command that cannot start: the error in the Status, no exit code.
    const bad = await client.exec({ containerId: id, cmd: ['/no/such/binary'], tty: false, stdin: false, stdout: true, stderr: true });
    const bs = await connectRuntimeStream(bad.url, { stdin: false, stdout: true, stderr: true, tty: false });
    collect(bs);
    await assert.rejects(bs.exit, /error executing command in container: .*no such file or directory/);
  });
});

test('CRI Exec and Attach requests are checked as containerd checks them', async () => {
  await withService(async (client, sb, id) => {
    await assert.rejects(client.exec({ containerId: 'nope', cmd: ['true'], tty: false, stdin: false, stdout: true, stderr: false }), NotFoundError);
    await assert.rejects(
      client.exec({ containerId: id, cmd: [], tty: false, stdin: false, stdout: true, stderr: false }),
      (e) => codeOf(e) === grpc.status.INVALID_ARGUMENT,
    );
    await assert.rejects(
      client.exec({ containerId: id, cmd: ['true'], tty: true, stdin: false, stdout: true, stderr: true }),
      /tty and stderr cannot both be true/,
    );
    await assert.rejects(
      client.exec({ containerId: id, cmd: ['true'], tty: false, stdin: false, stdout: false, stderr: false }),
      /one of stdin, stdout, or stderr must be set/,
    );
    await assert.rejects(
      client.attach({ containerId: id, tty: false, stdin: true, stdout: true, stderr: false }),
      (e) => codeOf(e) === grpc.status.FAILED_PRECONDITION,
    );
    await assert.rejects(client.portForward(sb, [80]), (e) => codeOf(e) === grpc.status.UNIMPLEMENTED && /share the host network/.test((e as Error).message));
  });
});

test("CRI Attach on the process runtime: the container's output as written, its exit code when it stops", async () => {
  await withService(async (client, _sb, id) => {
    const { url } = await client.attach({ containerId: id, tty: false, stdin: false, stdout: true, stderr: true });
    assert.match(url, /\/attach\//);
    const s = await connectRuntimeStream(url, { stdin: false, stdout: true, stderr: true, tty: false });
    const io = collect(s);
    await waitFor('attached output', () => /tick \d+\n.*tick \d+\n/s.test(io.out()) && /tock \d+\n/.test(io.err()));
    assert.doesNotMatch(io.out(), /tock/);
    await client.stopContainer(id, 5);
    assert.equal(await s.exit, 143);
    await assert.rejects(client.attach({ containerId: id, tty: false, stdin: false, stdout: true, stderr: false }), /CONTAINER_EXITED/);
  });
});

test('CRI Exec with a terminal on the process runtime: stdin and stdout are a terminal, input is echoed, resize reaches it', async () => {
  await withService(async (client, _sb, id) => {
    const cmd = [
      '/bin/sh',
      '-c',
      '[ -t 0 ] && [ -t 1 ] && echo is-a-tty; while [ "$(stty size)" != "30 100" ]; do sleep 0.05; done; echo sized; read x; echo "got-$x"; exit 4',
    ];
    const { url } = await client.exec({ containerId: id, cmd, tty: true, stdin: true, stdout: true, stderr: false });
    const s = await connectRuntimeStream(url, { stdin: true, stdout: true, stderr: false, tty: true });
    const io = collect(s);
    s.resize(100, 30);
    await waitFor('the size to reach the terminal', () => io.out().includes('sized'), 60_000);
    // A terminal turns the typed CR into a line end, and echoes it.
    s.stdin!.write('abc\r');
    assert.equal(await s.exit, 4);
    assert.match(io.out(), /is-a-tty\r\n/);
    assert.match(io.out(), /abc\r\n/);
    assert.match(io.out(), /got-abc\r\n/);
  });
});

test('a terminal exec that ignores hangups still ends with its container', async () => {
  await withService(async (client, _sb, id) => {
    const marker = `pvtty-hup${process.pid}`;
    const cmd = ['/bin/sh', '-c', 'trap "" HUP; echo armed; while :; do sleep 1; done', marker];
    const { url } = await client.exec({ containerId: id, cmd, tty: true, stdin: true, stdout: true, stderr: false });
    const s = await connectRuntimeStream(url, { stdin: true, stdout: true, stderr: false, tty: true });
    const io = collect(s);
    await waitFor('the exec running', () => io.out().includes('armed'), 30_000);
    assert.equal(withMarker(marker), 1);
    await client.stopContainer(id, 1);
    await waitFor('the exec gone with its container', () => withMarker(marker) === 0, 30_000);
  });
});

/** Processes with marker among their arguments. */
function withMarker(marker: string): number {
  let n = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(marker)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}
