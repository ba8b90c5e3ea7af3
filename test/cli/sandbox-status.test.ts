// A pod whose sandbox cannot be created, on containerd, through the real executable: `run` fails at
// once and its table says ContainerCreating; against an agent, `podvisor get pods` prints what kubectl
// prints for it (STATUS ContainerCreating, as on a cluster while the kubelet retries) and describe
// shows the FailedCreatePodSandBox event.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, startCli, tempDir } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';
import { containerdSuite, type ContainerdEnv } from '../containerd/harness.js';

let env: ContainerdEnv;
const skip = await containerdSuite((e) => (env = e));
const kubectl = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim();

// A sysctl the sandbox cannot be given: runc refuses to start the pause container, so RunPodSandbox fails.
const pod = () => `apiVersion: v1
kind: Pod
metadata: {name: nosandbox}
spec:
  securityContext:
    sysctls: [{name: net.ipv4.ip_local_port_range, value: "not a range"}]
  containers:
  - name: app
    image: ${env.images.busybox}
    command: [sleep, "300"]
`;

test(
  'a sandbox that cannot be created: run fails at once with ContainerCreating in its table; get pods matches kubectl; describe has FailedCreatePodSandBox',
  { skip },
  async () => {
    const dir = await tempDir();
    const common = ['--runtime=containerd', `--container-runtime-endpoint=${env.endpoint}`];
    try {
      const manifest = join(dir.path, 'pod.yaml');
      await writeFile(manifest, pod());
      const run = await runCli(['run', '-f', manifest, '--timeout=2m', ...common, `--root-dir=${join(dir.path, 'run')}`]);
      assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /^nosandbox +0\/1 +ContainerCreating +0 +\d+s$/m, run.stdout);
      assert.match(run.stdout + run.stderr, /FailedCreatePodSandBox/);

      const root = join(dir.path, 'agent');
      const agent = startCli(['agent', ...common, `--root-dir=${root}`, '--port=0']);
      try {
        const cli = (...args: string[]) => runCli([...args, `--root-dir=${root}`]);
        await waitFor('the agent answers', async () => (await cli('get', 'pods')).code === 0, 60_000);
        assert.equal((await cli('apply', '-f', manifest)).code, 0);
        const table = await waitFor(
          'podvisor get pods shows the pod ContainerCreating with a FailedCreatePodSandBox event',
          async () => {
            const got = await cli('get', 'pods');
            const described = await cli('describe', 'pod', 'nosandbox');
            return /ContainerCreating/.test(got.stdout) && /FailedCreatePodSandBox/.test(described.stdout) && got.stdout;
          },
          60_000,
        );
        assert.match(table, /^NAME +READY +STATUS +RESTARTS +AGE\nnosandbox +0\/1 +ContainerCreating +0 +\d+s\n$/);
        if (kubectl) {
          const k = spawnSync(kubectl, ['get', 'pods'], { env: { ...process.env, KUBECONFIG: join(root, 'kubeconfig') }, encoding: 'utf8', timeout: 60_000 });
          const mine = await cli('get', 'pods');
          assert.equal(k.stdout.replace(/\b\d+s\b/g, 'Xs'), mine.stdout.replace(/\b\d+s\b/g, 'Xs'), k.stderr);
        }
        await cli('delete', 'pod', 'nosandbox', '--grace-period=0');
      } finally {
        agent.child.kill('SIGTERM');
        await agent.exited;
      }
    } finally {
      await dir.remove();
    }
  },
);
