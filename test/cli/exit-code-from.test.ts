// `run --exit-code-from POD/CONTAINER` through the real executable, as compose means it: the named
// container's end (under restartPolicy Never any end, under Always its first, under OnFailure an
// exit 0 or the code it crash-loops with) is the command's exit code, while its pod's other
// container still runs; the rest is stopped then, pods still awaited are judged by what they
// reached, on pods alone (the in-process kubelet) and through the agent (beside a Service).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../fixtures/cli/cli-process.js';

/** A pod whose container `test` ends with `code` while `side` keeps running. */
const testPod = (policy: string, code: number) => `apiVersion: v1
kind: Pod
metadata: {name: t}
spec:
  restartPolicy: ${policy}
  terminationGracePeriodSeconds: 2
  containers:
  - name: test
    image: busybox
    command: ["sh", "-c", "echo testing; exit ${code}"]
  - name: side
    image: busybox
    command: ["sh", "-c", "echo side up; exec sleep 600"]
`;

/** A service pod that never becomes Ready. */
const neverReady = `apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: db
    image: busybox
    command: ["sh", "-c", "exec sleep 600"]
    readinessProbe:
      exec: {command: ["sh", "-c", "exit 1"]}
      periodSeconds: 1
`;

const service = `apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  selector: {app: db}
  ports: [{port: 15432}]
`;

async function run(manifest: string, ...flags: string[]) {
  const tmp = await tempDir();
  try {
    const file = join(tmp.path, 'ci.yaml');
    writeFileSync(file, manifest);
    // --timeout far beyond the runs: ending on the container, not on the timeout, is what is tested.
    return await runCli(['run', '-f', file, '--root-dir', join(tmp.path, 'root'), '--timeout', '3m', ...flags], 240_000);
  } finally {
    await tmp.remove();
  }
}

test('--exit-code-from t/test, restartPolicy Never: the container exit code while the other container runs, its reason and log, the rest stopped', async () => {
  const r = await run(testPod('Never', 3), '--exit-code-from', 't/test', '--logs');
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stdout, /^t\/test \| testing$/m);
  assert.match(r.stdout, /^pod\/t: container test exited with code 3\n {2}container test: exit code 3 \(Error\)\n {4}last 1 log line:\n {4}\| testing$/m);
  assert.doesNotMatch(r.stdout + r.stderr, /timed out/);
  assert.match(r.stderr, /^stopping 1 pod gracefully\nall pods stopped$/m);
});

test('--exit-code-from t/test, restartPolicy Always: its first end counts (0, then 4 with the log of the run that ended)', async () => {
  const ok = await run(testPod('Always', 0), '--exit-code-from', 't/test');
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^all 1 pod finished$/m);
  const failed = await run(testPod('Always', 4), '--exit-code-from', 't/test');
  assert.equal(failed.code, 4, failed.stdout + failed.stderr);
  assert.match(failed.stdout, /^pod\/t: container test exited with code 4\n {2}container test: exit code 4 \(Error\)\n {4}last 1 log line:\n {4}\| testing$/m);
});

test('--exit-code-from t/test, restartPolicy OnFailure: an exit 0 ends it; a failing one is retried, then its code once in CrashLoopBackOff', async () => {
  const ok = await run(testPod('OnFailure', 0), '--exit-code-from', 't/test');
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  const failed = await run(testPod('OnFailure', 5), '--exit-code-from', 't/test');
  assert.equal(failed.code, 5, failed.stdout + failed.stderr);
  assert.match(failed.stdout, /^pod\/t: .*CrashLoopBackOff: exited with code 5/m);
});

test('--exit-code-from a container the pod does not have: exit 2 naming its containers, nothing started', async () => {
  const r = await run(testPod('Never', 0), '--exit-code-from', 't/nope');
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^error: --exit-code-from: pod\/t has no container "nope" \(its containers: test, side\)$/m);
  assert.equal(r.stdout, '');
});

test('--exit-code-from ends the waits of the other pods: one not Ready yet is reported so, the exit code stays the container one', async () => {
  const alone = await run(`${neverReady}---\n${testPod('Never', 0)}`, '--exit-code-from', 't/test');
  assert.equal(alone.code, 0, alone.stdout + alone.stderr);
  assert.match(alone.stdout, /^pod\/db: container db running, not ready when container test of pod\/t ended$/m);
  // Through the agent (a Service needs it): the same end, in the agent waiter's words.
  const agent = await run(`${service}---\n${neverReady}---\n${testPod('Never', 6)}`, '--exit-code-from', 't/test');
  assert.equal(agent.code, 6, agent.stdout + agent.stderr);
  assert.match(agent.stderr, /^pod\/db: container db not ready when container test of pod\/t ended/m);
  assert.match(agent.stderr, /^pod\/t: container test exited with code 6\n {2}container test: exit code 6 \(Error\)\n {4}last 1 log line:\n {4}\| testing$/m);
  assert.doesNotMatch(agent.stderr, /objects ok/);
});
