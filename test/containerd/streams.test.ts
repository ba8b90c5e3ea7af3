// kubectl exec and attach into containerd pods through `podvisor agent --runtime=containerd`: the
// agent asks containerd's CRI for Exec/Attach URLs and speaks to its streaming server, as the kubelet
// does. stdout, stderr, stdin (closed at its end), exit codes, a terminal (through `script`'s pty),
// attach to a running container's output; and the stream client straight against a CRI Exec URL.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CriRuntimeClient } from '../../src/runtime/cri/client.js';
import { connectRuntimeStream } from '../../src/runtime/cri/stream-client.js';
import { silentLogger } from '../../src/util/logger.js';
import { startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlExecOnTerminal, kubectlPath, kubectlSpawn, waitFor } from '../kubeapi/harness.js';
import { containerdSuite, type ContainerdEnv } from './harness.js';

let env: ContainerdEnv;
const noContainerd = await containerdSuite((e) => (env = e));
const skip = noContainerd ?? (kubectlPath ? false : 'kubectl is not installed');

describe('exec and attach into containerd pods through the agent', { skip }, () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let agent: CliProcess | undefined;
  let api: { kubeconfig: string; dir: string };

  before(async () => {
    if (skip) return;
    dir = await tempDir('podvisor-ctrd-streams-');
    const root = join(dir.path, 'root');
    agent = startCli([
      'agent',
      '--root-dir',
      root,
      '--port',
      '0',
      '--address',
      '127.0.0.1',
      '--runtime=containerd',
      `--container-runtime-endpoint=${env.endpoint}`,
    ]);
    await agent.waitFor('stderr', /podvisor agent started/, 60_000);
    api = { kubeconfig: join(root, 'kubeconfig'), dir: dir.path };
    const file = join(dir.path, 'pod.json');
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'box' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'main', image: env.images.busybox, command: ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done'] },
          { name: 'echo', image: env.images.busybox, stdin: true, command: ['sh', '-c', 'while read -r l; do echo "got $l"; done'] },
        ],
      },
    };
    writeFileSync(file, JSON.stringify(pod));
    const r = await kubectl(api, ['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    await waitFor('the pod to run', async () => /box\s+2\/2\s+Running/.test((await kubectl(api, ['get', 'pods'])).stdout), 120_000);
  });

  after(async () => {
    if (!agent) return;
    await kubectl(api, ['delete', 'pod', 'box', '--wait=true']).catch(() => undefined);
    if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
    await agent.exited;
    await dir.remove();
  });

  test('kubectl exec into a containerd pod: stdout, stderr and the exit code', { skip }, async () => {
    const r = await kubectl(api, ['exec', 'box', '-c', 'main', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
    assert.equal(r.stdout, 'out\n', r.stderr);
    assert.match(r.stderr, /^err$/m);
    assert.equal(r.code, 7, r.stderr);
    const ok = await kubectl(api, ['exec', 'box', '-c', 'main', '--', 'cat', '/etc/hostname']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'box\n');
  });

  test('kubectl exec -i into a containerd pod: stdin reaches the command and its end closes it', { skip }, async () => {
    const input = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const r = await kubectl(api, ['exec', '-i', 'box', '-c', 'main', '--', 'sh', '-c', 'wc -l; exit 3'], input);
    assert.equal(r.stdout.trim(), '2000', r.stderr);
    assert.equal(r.code, 3, r.stderr);
    const cat = await kubectl(api, ['exec', '-i', 'box', '-c', 'main', '--', 'cat'], 'hello through stdin\n');
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout, 'hello through stdin\n');
  });

  test('kubectl exec -it into a containerd pod: a terminal, its input echoed, the exit code', { skip }, async () => {
    const tty = await kubectlExecOnTerminal(api, ['box', '-c', 'main']);
    assert.equal(tty.code, 4, tty.out);
    assert.match(tty.out, /is-a-tty\r\n/);
    assert.match(tty.out, /got-abc\r\n/);
  });

  test('kubectl attach to a containerd pod: the running container output as written', { skip }, async () => {
    const before = Number(/tick (\d+)/.exec((await kubectl(api, ['logs', 'box', '-c', 'main', '--tail=1'])).stdout)?.[1] ?? -1);
    const child = kubectlSpawn(api, ['attach', 'box', '-c', 'main']);
    try {
      // New lines, written after the attach, arrive through it.
      await waitFor('attached output', () => [...child.out().matchAll(/tick (\d+)/g)].some((m) => Number(m[1]) > before + 1), 60_000);
    } finally {
      child.kill('SIGTERM');
    }
  });

  test("kubectl attach -i to a container with stdin: the input reaches the container's own stdin", { skip }, async () => {
    const child = kubectlSpawn(api, ['attach', '-i', 'box', '-c', 'echo']);
    try {
      child.stdin!.write('hello attached\n');
      await waitFor('the echoed input', () => child.out().includes('got hello attached'), 60_000);
    } finally {
      child.kill('SIGTERM');
    }
  });

  test("the stream client on a CRI Exec URL of containerd's streaming server", { skip }, async () => {
    const cri = new CriRuntimeClient({ endpoint: env.endpoint, logger: silentLogger, name: 'containerd' });
    try {
      const [c] = await cri.listContainers({ state: 'CONTAINER_RUNNING', labelSelector: { 'io.kubernetes.pod.name': 'box' } });
      assert.ok(c, 'the pod container is listed');
      const { url } = await cri.exec({
        containerId: c.id,
        cmd: ['sh', '-c', 'cat; echo bye >&2; exit 9'],
        tty: false,
        stdin: true,
        stdout: true,
        stderr: true,
      });
      assert.match(url, /^https?:\/\/[^/]+\/exec\//);
      const s = await connectRuntimeStream(url, { stdin: true, stdout: true, stderr: true, tty: false });
      let out = '';
      let err = '';
      s.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      s.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      s.stdin!.end('from the client\n');
      assert.equal(await s.exit, 9);
      assert.equal(out, 'from the client\n');
      assert.equal(err, 'bye\n');
      // A command that cannot start: the runtime's message, no exit code.
      const bad = await cri.exec({ containerId: c.id, cmd: ['/no/such/binary'], tty: false, stdin: false, stdout: true, stderr: true });
      const s2 = await connectRuntimeStream(bad.url, { stdin: false, stdout: true, stderr: true, tty: false });
      s2.stdout!.resume();
      s2.stderr!.resume();
      await assert.rejects(s2.exit, /no such file|not found|executable/i);
    } finally {
      await cri.close();
    }
  });
});
