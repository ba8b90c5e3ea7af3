// The waiting commands list once and then watch: every request they send to the agent is seen by a
// proxy put in place of the agent's socket, so a wait that polled (a GET of each pod, or of the whole
// list, every 100 ms) would show here as dozens of requests while the pods take seconds to stop.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startCli, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { waitFor } from '../fixtures/wait.js';

let dir: { path: string; remove(): Promise<void> };
let root: string;
let agent: CliProcess;
let proxy: Server;
/** Each request line the clients sent (`GET /api/v1/pods?watch=1…`), in order. */
const requests: string[] = [];

const cli = (...args: string[]) => runCli([...args, '--root-dir', root]);

/** Pods that ignore SIGTERM for the grace period given: their deletion takes that long. */
function stubbornPods(names: string[], graceSeconds: number): string {
  return names
    .map((name) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          terminationGracePeriodSeconds: graceSeconds,
          containers: [{ name: 'app', image: 'busybox', command: ['sh', '-c', "trap '' TERM; while true; do sleep 1; done"] }],
        },
      }),
    )
    .join('\n---\n');
}

before(async () => {
  dir = await tempDir();
  root = join(dir.path, 'root');
  agent = startCli(['agent', '--root-dir', root]);
  await agent.waitFor('stderr', /podvisor agent started/);
  // The agent keeps serving on the renamed socket; the clients reach it through the proxy.
  const real = join(root, 'agent-behind-proxy.sock');
  await rename(join(root, 'podvisor.sock'), real);
  proxy = createServer((client) => {
    const upstream = connect(real);
    let head = '';
    client.on('data', (b: Buffer) => {
      head += b.toString('latin1');
      for (const m of head.matchAll(/^(GET|POST|PUT|PATCH|DELETE) (\S+) HTTP\/1\.1\r$/gm)) requests.push(`${m[1]} ${m[2]}`);
      head = head.slice(head.lastIndexOf('\n') + 1);
    });
    client.pipe(upstream).pipe(client);
    const close = () => (client.destroy(), upstream.destroy());
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  await new Promise<void>((r) => proxy.listen(join(root, 'podvisor.sock'), r));
});

after(async () => {
  proxy?.close();
  if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
  await agent.exited;
  await dir.remove();
});

const lists = (rs: string[]) => rs.filter((r) => /^GET \/api\/v1\/pods(\?(?!.*watch=).*)?$/.test(r));
const watches = (rs: string[]) => rs.filter((r) => /^GET \/api\/v1\/pods\?.*watch=1/.test(r));
const podGets = (rs: string[]) => rs.filter((r) => /^GET \/api\/v1\/namespaces\/[^/]+\/pods\/[^/?]+$/.test(r));

test('up -d --wait and down wait on one list and one watch, however long the pods take to stop', async () => {
  const names = ['w1', 'w2', 'w3', 'w4'];
  const file = join(dir.path, 'stubborn.yaml');
  await writeFile(file, stubbornPods(names, 3));

  requests.length = 0;
  const up = await cli('up', '-d', '-f', file, '--wait=running', '--timeout=60s');
  assert.equal(up.code, 0, up.stderr);
  const upRequests = [...requests];
  assert.equal(lists(upRequests).length, 1, `one list of the pods: ${upRequests.join(', ')}`);
  assert.equal(watches(upRequests).length, 1, `one watch of the pods: ${upRequests.join(', ')}`);
  assert.match(watches(upRequests)[0]!, /resourceVersion=\d+/, 'the watch starts from the list');
  assert.deepEqual(podGets(upRequests), [], 'no pod read one by one');

  requests.length = 0;
  const started = Date.now();
  const down = await cli('down', '-f', file);
  const took = Date.now() - started;
  assert.equal(down.code, 0, down.stderr);
  assert.ok(took >= 2500, `down waited out the 3 s grace period (${took} ms)`);
  for (const n of names) assert.match(down.stdout, new RegExp(`pod "${n}" deleted`));
  const downRequests = [...requests];
  assert.equal(downRequests.filter((r) => r.startsWith('DELETE ')).length, names.length);
  assert.equal(lists(downRequests).length, 1, `one list while ${took} ms passed: ${downRequests.join(', ')}`);
  assert.equal(watches(downRequests).length, 1);
  assert.deepEqual(podGets(downRequests), [], 'no pod polled');
});

test('delete waits on the watch: it returns once the DELETED event arrives, with no poll', async () => {
  const file = join(dir.path, 'one.yaml');
  await writeFile(file, stubbornPods(['d1'], 2));
  const up = await cli('up', '-d', '-f', file, '--wait=running', '--timeout=60s');
  assert.equal(up.code, 0, up.stderr);

  requests.length = 0;
  const deleting = startCli(['delete', 'pod', 'd1', '--root-dir', root]);
  await deleting.waitFor('stdout', /pod "d1" deleted/);
  await waitFor('the delete command to watch the pods', () => watches(requests).length === 1, 30_000);
  const { code } = await deleting.exited;
  assert.equal(code, 0, deleting.stderr());
  assert.equal(lists(requests).length, 1, requests.join(', '));
  assert.deepEqual(podGets(requests), [], 'no pod polled');
  const after = await cli('get', 'pods', 'd1');
  assert.equal(after.code, 1, 'the pod is gone when delete returns');
});
