// The CRI client against the CRI server over a real unix socket, with the process runtime behind it:
// every RuntimeService call, conversions (ns timestamps, signals, enums, optional fields), events,
// and the gRPC codes NotFound and InvalidArgument.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { PROCESS_RUNTIME_CAPABILITIES, ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { containerProcessInfo, CRI_RUNTIME_CAPABILITIES, NotFoundError, type ContainerEvent } from '../../src/runtime/cri.js';
import { CriError, CriRuntimeClient, connectCriRuntime } from '../../src/runtime/cri/client.js';
import { serveCri } from '../../src/runtime/cri/server.js';
import {
  containerConfigFromWire,
  containerConfigToWire,
  msToNs,
  nsToMs,
  sandboxConfigFromWire,
  sandboxConfigToWire,
  signalFromWire,
  signalToWire,
} from '../../src/runtime/cri/convert.js';
import { loadCriServices, warmCodecs } from '../../src/runtime/cri/proto.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { holdsFor } from '../fixtures/wait.js';
import { containerConfig, isAlive, readPid, sandboxConfig, tempDir, waitFor } from './helpers.js';

async function withServed(fn: (client: CriRuntimeClient, root: string, endpoint: string) => Promise<void>) {
  const { dir, cleanup } = tempDir('podvisor-cri-');
  const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger });
  const server = await serveCri(rt, { endpoint: `unix://${join(dir, 'runtime.sock')}`, logger: silentLogger });
  const client = await connectCriRuntime({ endpoint: server.endpoint, logger: silentLogger });
  try {
    await fn(client, dir, server.endpoint);
  } finally {
    await client.close();
    await server.close();
    await rt.close();
    cleanup();
  }
}

test('conversions: nanosecond timestamps, signals, optional fields round-trip', () => {
  const ms = 1_764_700_000_123;
  assert.equal(msToNs(ms), '1764700000123000000');
  assert.equal(nsToMs('1764700000123456789'), ms);
  assert.equal(msToNs(0), '0');
  assert.equal(nsToMs('0'), 0);
  assert.equal(signalToWire('SIGTERM'), 'SIGNAL_SIGTERM');
  assert.equal(signalToWire(undefined), 'SIGNAL_RUNTIME_DEFAULT');
  assert.equal(signalFromWire('SIGNAL_SIGUSR1'), 'SIGUSR1');
  assert.equal(signalFromWire('SIGNAL_RUNTIME_DEFAULT'), undefined);

  const root = '/tmp/x';
  const sbc = {
    ...sandboxConfig(root),
    dnsConfig: { servers: ['10.0.0.10'], searches: ['default.svc.cluster.local'], options: ['ndots:5'] },
    portMappings: [{ protocol: 'UDP' as const, containerPort: 53, hostPort: 5353, hostIp: '127.0.0.1' }],
    linux: {
      cgroupParent: '/kubepods/pod1',
      securityContext: {
        namespaceOptions: { network: 'NODE' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const },
        runAsUser: 0,
        supplementalGroups: [5, 6],
      },
      sysctls: { 'net.core.somaxconn': '1024' },
    },
  };
  assert.deepEqual(sandboxConfigFromWire(sandboxConfigToWire(sbc)), sbc);
  const cc = containerConfig(['sleep', '1'], {
    stopSignal: 'SIGUSR2',
    envs: [{ key: 'A', value: 'b' }],
    mounts: [{ containerPath: '/data', hostPath: '/srv', readonly: true }],
    linux: {
      resources: { cpuPeriod: 100000, cpuQuota: 50000, cpuShares: 512, memoryLimitInBytes: 64 << 20, oomScoreAdj: 1000, unified: { 'pids.max': '20' } },
      securityContext: { capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] }, runAsUser: 1000, runAsGroup: 0, noNewPrivs: true },
    },
  });
  assert.deepEqual(containerConfigFromWire(containerConfigToWire(cc)), cc);
});

test('every RuntimeService call over the wire', async () => {
  await withServed(async (client, root) => {
    const v = await client.version();
    assert.equal(v.runtimeName, 'process');
    assert.equal(v.runtimeApiVersion, 'v1');
    assert.equal(client.name, 'process');
    // What the runtime is, learnt at connect from the verbose Status: host processes, no images, no mounts.
    assert.deepEqual(client.capabilities, PROCESS_RUNTIME_CAPABILITIES);
    // A client that asked nothing takes the runtime for one of images (containerd).
    const unasked = new CriRuntimeClient({ endpoint: 'unix:///nowhere', logger: silentLogger });
    assert.equal(unasked.capabilities, CRI_RUNTIME_CAPABILITIES);
    await unasked.close();
    const conditions = await client.status();
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status]),
      [
        ['RuntimeReady', true],
        ['NetworkReady', true],
      ],
    );
    await client.updateRuntimeConfig('10.244.0.0/24');

    const events: ContainerEvent[] = [];
    const off = client.onContainerEvent((ev) => events.push(ev));

    const sbc = { ...sandboxConfig(root, 'web'), labels: { 'io.kubernetes.pod.uid': 'uid-web' }, annotations: { a: 'b' } };
    const before = Date.now();
    const sb = await client.runPodSandbox(sbc);
    const st = await client.podSandboxStatus(sb);
    assert.equal(st.id, sb);
    assert.equal(st.state, 'SANDBOX_READY');
    assert.deepEqual(st.metadata, sbc.metadata);
    assert.equal(st.network.ip, '127.0.0.1');
    assert.ok(st.createdAt >= before - 1000 && st.createdAt <= Date.now() + 1000, 'createdAt in ms after the ns round trip');
    assert.deepEqual(st.labels, sbc.labels);
    assert.deepEqual(st.annotations, sbc.annotations);
    assert.deepEqual(
      (await client.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-web' } })).map((s) => s.id),
      [sb],
    );
    assert.deepEqual(await client.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'other' } }), []);

    const pidFile = join(root, 'pid');
    const id = await client.createContainer(
      sb,
      containerConfig(['sh', '-c', `echo $$ > ${pidFile}; echo hello; trap 'exit 7' USR1; while :; do sleep 0.05; done`], {
        stopSignal: 'SIGUSR1',
        labels: { 'io.kubernetes.container.name': 'app' },
      }),
      sbc,
    );
    let cs = await client.containerStatus(id);
    assert.equal(cs.state, 'CONTAINER_CREATED');
    assert.equal(cs.podSandboxId, sb);
    await client.startContainer(id);
    const pid = await readPid(pidFile);
    cs = await client.containerStatus(id);
    assert.equal(cs.state, 'CONTAINER_RUNNING');
    assert.ok(cs.startedAt >= cs.createdAt);
    assert.ok(cs.logPath.endsWith('app/0.log'));
    // verbose: the process context a host-process container's usage needs.
    const ctx = await containerProcessInfo(client, id);
    assert.ok(ctx);
    assert.equal(ctx.pgid, pid);
    assert.equal(ctx.pid, pid);
    assert.match(ctx.startTime ?? '', /^[0-9]+$/);
    assert.equal(typeof ctx.cwd, 'string');
    assert.ok(ctx.env.PATH);
    assert.deepEqual(Object.keys(await client.containerInfo(id)), ['podvisor.process']);
    assert.equal(await containerProcessInfo(client, 'nope'), undefined);

    const listed = await client.listContainers({ podSandboxId: sb, state: 'CONTAINER_RUNNING' });
    assert.deepEqual(
      listed.map((c) => [c.id, c.podSandboxId, c.state, c.labels['io.kubernetes.container.name']]),
      [[id, sb, 'CONTAINER_RUNNING', 'app']],
    );
    assert.deepEqual(await client.listContainers({ state: 'CONTAINER_EXITED' }), []);

    const ex = await client.execSync(id, ['sh', '-c', 'echo out; echo err >&2; exit 3'], 10);
    assert.deepEqual([ex.exitCode, ex.stdout.toString(), ex.stderr.toString(), ex.timedOut], [3, 'out\n', 'err\n', false]);
    const slow = await client.execSync(id, ['sleep', '30'], 1);
    assert.equal(slow.timedOut, true);

    const stats = await client.listContainerStats({ podSandboxId: sb });
    assert.deepEqual(
      stats.map((s) => s.id),
      [id],
    );
    assert.equal((await client.containerStats(id)).name, 'app');

    // The stop signal crosses the wire as CRI's Signal enum: USR1 makes the container exit 7.
    await client.stopContainer(id, 30);
    cs = await client.containerStatus(id);
    assert.deepEqual([cs.state, cs.exitCode, cs.reason], ['CONTAINER_EXITED', 7, 'Error']);
    assert.ok(cs.finishedAt >= cs.startedAt);
    assert.equal(isAlive(pid), false);

    await waitFor('stopped event', () => events.some((e) => e.containerId === id && e.type === 'CONTAINER_STOPPED_EVENT'));
    assert.deepEqual(
      events.filter((e) => e.containerId === id).map((e) => e.type),
      ['CONTAINER_CREATED_EVENT', 'CONTAINER_STARTED_EVENT', 'CONTAINER_STOPPED_EVENT'],
    );
    assert.ok(events.every((e) => e.podSandboxId === sb && e.createdAt > 0));

    await client.removeContainer(id);
    await assert.rejects(client.containerStatus(id), NotFoundError);
    await client.stopPodSandbox(sb);
    assert.equal((await client.podSandboxStatus(sb)).state, 'SANDBOX_NOTREADY');
    await client.removePodSandbox(sb);
    await assert.rejects(client.podSandboxStatus(sb), NotFoundError);
    await waitFor('deleted event', () => events.some((e) => e.containerId === id && e.type === 'CONTAINER_DELETED_EVENT'));
    off();

    // Without images, every image is present under its name (host binaries run), none is listed.
    assert.deepEqual(await client.images.listImages(), []);
    assert.deepEqual(await client.images.imageStatus({ image: 'busybox' }), { id: 'process://busybox', repoTags: ['busybox'], repoDigests: [], size: 0 });
    assert.equal((await client.images.imageStatus({ image: 'process://busybox' }))?.id, 'process://busybox');
    assert.equal(await client.images.pullImage({ image: 'busybox' }), 'process://busybox');
    await client.images.removeImage({ image: 'busybox' });
    assert.deepEqual(await client.imageFsInfo(), { imageFilesystems: [], containerFilesystems: [] });
  });
});

test('error codes: NotFound for unknown ids, InvalidArgument for malformed requests', async () => {
  await withServed(async (client, root, endpoint) => {
    await assert.rejects(client.containerStatus('nope'), NotFoundError);
    await assert.rejects(client.startContainer('nope'), NotFoundError);
    await assert.rejects(client.stopContainer('nope', 0), NotFoundError);
    await assert.rejects(client.execSync('nope', ['true'], 1), NotFoundError);
    await assert.rejects(client.podSandboxStatus('nope'), NotFoundError);
    await assert.rejects(client.createContainer('nope', containerConfig(['true']), sandboxConfig(root)), NotFoundError);

    const isInvalid = (err: unknown) => err instanceof CriError && err.code === grpc.status.INVALID_ARGUMENT;
    await assert.rejects(client.startContainer(''), isInvalid);
    await assert.rejects(client.podSandboxStatus(''), isInvalid);
    const sbc = sandboxConfig(root);
    const sb = await client.runPodSandbox(sbc);
    const id = await client.createContainer(sb, containerConfig(['sleep', '30']), sbc);
    await client.startContainer(id);
    await assert.rejects(client.execSync(id, [], 1), isInvalid);
    await assert.rejects(client.runPodSandbox({ ...sbc, metadata: { ...sbc.metadata, uid: '' } }), isInvalid);

    // A raw client sending a request without its config gets InvalidArgument too.
    const services = loadCriServices();
    const raw = new services.RuntimeService(endpoint, grpc.credentials.createInsecure());
    const code = await new Promise<number>((resolve) =>
      (raw as unknown as { CreateContainer: (r: object, cb: (e: grpc.ServiceError | null) => void) => void }).CreateContainer({ podSandboxId: sb }, (e) =>
        resolve(e?.code ?? 0),
      ),
    );
    raw.close();
    assert.equal(code, grpc.status.INVALID_ARGUMENT);
    await client.removePodSandbox(sb);
  });
});

test('the socket is 0600 and the event stream reconnects to a restarted server', async () => {
  const { dir, cleanup } = tempDir('podvisor-cri-');
  const endpoint = `unix://${join(dir, 'runtime.sock')}`;
  const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger });
  let server = await serveCri(rt, { endpoint, logger: silentLogger });
  assert.equal(statSync(join(dir, 'runtime.sock')).mode & 0o777, 0o600);
  const client = new CriRuntimeClient({ endpoint, logger: silentLogger });
  try {
    const events: ContainerEvent[] = [];
    client.onContainerEvent((ev) => events.push(ev));
    const sbc = sandboxConfig(dir);
    const sb = await client.runPodSandbox(sbc);
    await client.createContainer(sb, containerConfig(['true']), sbc);
    await waitFor('first event', () => events.length === 1);
    await server.close();
    await assert.rejects(client.version(), (e) => e instanceof CriError && e.code === grpc.status.UNAVAILABLE);
    server = await serveCri(rt, { endpoint, logger: silentLogger });
    // The stream comes back by itself; events after that reach the listener.
    await waitFor('an event after the restart', async () => {
      await client.createContainer(sb, containerConfig(['true']), sbc).catch(() => undefined);
      return events.length >= 2;
    });
  } finally {
    await client.close();
    await server.close();
    await rt.close();
    cleanup();
  }
});

test('warmCodecs makes every message type once, a few per turn, and stops when asked', async () => {
  const { messageTypes } = loadCriServices();
  assert.ok(messageTypes.length > 100, `${messageTypes.length} message types`);
  assert.ok(messageTypes.every((t) => t.format === 'Protocol Buffer 3 DescriptorProto'));
  const counting = (n: number, onMake?: (i: number) => void) => {
    const made: number[] = [];
    const make = (i: number) => {
      made.push(i);
      onMake?.(i);
      return Buffer.alloc(0);
    };
    const types = Array.from({ length: n }, (_, i) => ({ ...messageTypes[0]!, serialize: () => make(i), deserialize: () => ({}) }));
    return { types, made };
  };
  const all = counting(10);
  warmCodecs(all.types, 4);
  assert.deepEqual(all.made, [], 'nothing on the calling turn');
  await waitFor('every type made', () => all.made.length === 10);
  assert.deepEqual(all.made, [...Array(10).keys()], 'each once, in order');

  // Stopped in the middle of a turn (type 5 of the second): nothing more is made, then or later.
  let stop = () => {};
  const stopped = counting(40, (i) => i === 5 && stop());
  stop = warmCodecs(stopped.types, 4);
  await waitFor('two turns', () => stopped.made.length >= 6);
  await holdsFor('nothing made after stop', () => stopped.made.length === 6, 50);
  assert.deepEqual(stopped.made, [0, 1, 2, 3, 4, 5], 'nothing after stop');

  // The real types: a warmed request codec round-trips as before.
  warmCodecs(messageTypes, messageTypes.length);
  const { RuntimeService } = loadCriServices();
  const m = (RuntimeService.service as unknown as Record<string, grpc.MethodDefinition<object, object>>).Version!;
  assert.deepEqual(m.requestDeserialize(m.requestSerialize({ version: 'v1' })), { version: 'v1' });
});

test('durations past a timer range over the wire: ExecSync with timeout 3,000,000 s and a stop with that grace are not cut short', async () => {
  await withServed(async (client, root) => {
    const sbc = sandboxConfig(root, 'long');
    const sb = await client.runPodSandbox(sbc);
    const id = await client.createContainer(sb, containerConfig(['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 0.05; done']), sbc);
    await client.startContainer(id);
    const r = await client.execSync(id, ['sh', '-c', 'sleep 0.2; echo done'], 3_000_000);
    assert.equal(r.exitCode, 0, 'the exec ran to its end, not timed out at once');
    assert.equal(r.stdout.toString().trim(), 'done');
    // A stop with a 3,000,000 s grace: the TERM is honoured, no DeadlineExceeded.
    await client.stopContainer(id, 3_000_000);
    const st = await client.containerStatus(id);
    assert.deepEqual([st.state, st.exitCode], ['CONTAINER_EXITED', 0]);
    await client.removePodSandbox(sb);
  });
});
