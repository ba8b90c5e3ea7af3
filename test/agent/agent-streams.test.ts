// Interactive exec and attach through `podvisor agent` on the process runtime service, with kubectl:
// the exec runs in the container's context (env, working directory) as the verbose ContainerStatus
// gives it, reads its stdin, runs on a terminal with -t, and dies with the container; attach follows
// the container's output.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, tempDir } from '../fixtures/cli/cli-process.js';
import { kubectl, kubectlExecOnTerminal, kubectlPath, kubectlSpawn, waitFor } from '../kubeapi/harness.js';

/** Processes with marker among their arguments, kubectl's own (which names it too) aside. */
function processesWith(marker: string): number {
  let n = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (argv.includes(marker) && !argv[0]!.endsWith('kubectl')) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/** An agent on a fresh root dir, its kubeconfig, and a pod `web` of the given spec applied and Running. */
async function agentWithPod(spec: string) {
  const dir = await tempDir();
  const root = dir.path;
  const agent = startCli(['agent', '--root-dir', root, '--port', '0', '--address', '127.0.0.1']);
  const api = { kubeconfig: join(root, 'kubeconfig'), dir: root };
  const stop = async () => {
    if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGTERM');
    await agent.exited;
    await dir.remove();
  };
  try {
    await agent.waitFor('stderr', /podvisor agent started/);
    const file = join(root, 'pod.yaml');
    writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n${spec}`);
    const r = await kubectl(api, ['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    await waitFor('the pod to run', async () => /web\s+1\/1\s+Running/.test((await kubectl(api, ['get', 'pods'])).stdout), 60_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { agent, api, stop };
}

test('exec (context, stdin, dies with the container) and attach through the agent', { skip: kubectlPath ? false : 'kubectl is not installed' }, async () => {
  const { api, stop } = await agentWithPod(`  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    workingDir: /tmp
    env: [{name: GREETING, value: from-the-pod}]
    command: ["/bin/sh", "-c", "i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.2; done"]
`);
  const marker = `pvexec${process.pid}`;
  try {
    let r = await kubectl(api, ['exec', 'web', '--', 'sh', '-c', 'echo "$GREETING $(pwd)"']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'from-the-pod /tmp\n');
    r = await kubectl(api, ['exec', '-i', 'web', '--', 'cat'], 'through stdin\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'through stdin\n');

    // exec -it: a terminal, the typed line echoed and read, the exit code.
    const tty = await kubectlExecOnTerminal(api, ['web']);
    assert.equal(tty.code, 4, tty.out);
    assert.match(tty.out, /is-a-tty\r\n/);
    assert.match(tty.out, /got-abc\r\n/);

    const attach = kubectlSpawn(api, ['attach', 'web', '-c', 'main']);
    await waitFor('attached output', () => /tick-[0-9]+\ntick-[0-9]+\n/.test(attach.out()), 30_000);
    attach.kill('SIGTERM');

    // An exec left running dies with its container.
    const exec = kubectlSpawn(api, ['exec', 'web', '--', 'sh', '-c', 'sleep 300', marker]);
    await waitFor('the exec running', () => processesWith(marker) === 1, 30_000);
    r = await kubectl(api, ['delete', 'pod', 'web']);
    assert.equal(r.code, 0, r.stderr);
    await waitFor('the exec gone with the container', () => processesWith(marker) === 0, 30_000);
    exec.kill('SIGKILL');
  } finally {
    await stop();
  }
});

test(
  'an exec running when the agent is killed -9 ends with its stream, as the runtime owns it; the container keeps running',
  { skip: kubectlPath ? false : 'kubectl is not installed' },
  async () => {
    const execMarker = `pvexec-kill${process.pid}`;
    const mainMarker = `pvmain-kill${process.pid}`;
    const { agent, api, stop } = await agentWithPod(`  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "sleep 600", "${mainMarker}"]
`);
    let exec: ReturnType<typeof kubectlSpawn> | undefined;
    try {
      exec = kubectlSpawn(api, ['exec', 'web', '--', 'sh', '-c', 'sleep 300', execMarker]);
      await waitFor('the exec running', () => processesWith(execMarker) === 1, 30_000);
      agent.child.kill('SIGKILL');
      await agent.exited;
      await waitFor('the exec gone with the agent', () => processesWith(execMarker) === 0, 30_000);
      assert.equal(processesWith(mainMarker), 1, 'the container still runs');
    } finally {
      exec?.kill('SIGKILL');
      await stop();
    }
  },
);
