// NodePorts of two agents on one host, through real `podvisor agent` processes and the real kubectl:
// each agent gives its NodePort Service a port no other process holds, so each NodePort reaches that
// agent's own pod only; a nodePort named in the Service that another process holds (the other
// agent's proxy) is created with a Warning header naming it, and the proxy that cannot listen there
// says so with a Warning event on the Service (kube-proxy's words, the holder and the fix).

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startCli, stopRuntimeServices, tempDir, type CliProcess } from '../fixtures/cli/cli-process.js';
import { freePorts } from '../fixtures/ports.js';
import { waitFor } from '../fixtures/wait.js';
import { kubectl, kubectlPath } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';

let tmp: { path: string; remove(): Promise<void> } | undefined;
const agents: CliProcess[] = [];

before(async () => {
  if (skip) return;
  tmp = await tempDir();
  for (const name of ['a', 'b']) {
    const agent = startCli(['agent', '--root-dir', join(tmp.path, name), '--port', '0', '--address', '127.0.0.1']);
    agents.push(agent);
  }
  await Promise.all(agents.map((a) => a.waitFor('stderr', /podvisor agent started/, 60_000)));
});

after(async () => {
  for (const a of agents) if (a.child.exitCode === null) a.child.kill('SIGTERM');
  await Promise.all(agents.map((a) => a.exited));
  if (tmp) {
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});

const api = (name: string) => ({ kubeconfig: join(tmp!.path, name, 'kubeconfig'), dir: join(tmp!.path, `kubectl-${name}`) });

/** The body of one GET on a connection of its own, or the error's code. */
function fetchOnce(port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/', agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`error:${err.code ?? err.message}`));
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

/** A pod answering HTTP with its name on `port`, and a NodePort Service in front of it (nodePort: as given, or left to the agent). */
function podAndService(name: string, port: number, nodePort?: number): string {
  const server = `require('http').createServer((q, r) => r.end(${JSON.stringify(name)})).listen(${port}, '127.0.0.1')`;
  const file = join(tmp!.path, `${name}.yaml`);
  writeFileSync(
    file,
    `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: {app: ${name}}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: web, image: node, command: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(server)}]}]
---
apiVersion: v1
kind: Service
metadata: {name: ${name}}
spec:
  type: NodePort
  selector: {app: ${name}}
  ports: [{port: 80, targetPort: ${port}${nodePort ? `, nodePort: ${nodePort}` : ''}}]
`,
  );
  return file;
}

async function nodePortOf(agent: string, name: string): Promise<number> {
  const r = await kubectl(api(agent), ['get', 'svc', name, '-o', 'jsonpath={.spec.ports[0].nodePort}']);
  assert.equal(r.code, 0, r.stderr);
  return Number(r.stdout);
}

const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('Warning: '));

test('two agents on one host: each NodePort Service without a nodePort gets a port no other process holds, reaching its own pod only', { skip }, async () => {
  const [pa, pb] = await freePorts(2);
  for (const [agent, name, port] of [
    ['a', 'alpha', pa!],
    ['b', 'beta', pb!],
  ] as const) {
    const r = await kubectl(api(agent), ['apply', '-f', podAndService(name, port)]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(warnings(r.stderr), [], 'a port the agent chooses is free');
  }
  const [na, nb] = [await nodePortOf('a', 'alpha'), await nodePortOf('b', 'beta')];
  assert.notEqual(na, nb);
  for (const n of [na, nb]) assert.ok(n >= 30000 && n <= 32767, `${n} in the NodePort range`);
  assert.equal(await waitFor(`alpha on its NodePort ${na}`, async () => ((await fetchOnce(na)) === 'alpha' ? 'alpha' : ''), 60_000), 'alpha');
  assert.equal(await waitFor(`beta on its NodePort ${nb}`, async () => ((await fetchOnce(nb)) === 'beta' ? 'beta' : ''), 60_000), 'beta');
  for (let i = 0; i < 4; i++) assert.deepEqual([await fetchOnce(na), await fetchOnce(nb)], ['alpha', 'beta']);
  for (const [agent, name] of [
    ['a', 'alpha'],
    ['b', 'beta'],
  ] as const)
    await kubectl(api(agent), ['delete', '-f', join(tmp!.path, `${name}.yaml`), '--grace-period=0', '--wait=false']);
});

test(
  "a nodePort another process holds (the other agent's): created with a Warning header naming it, and a Warning event from the proxy",
  { skip },
  async () => {
    const [pa, pb] = await freePorts(2);
    let r = await kubectl(api('a'), ['apply', '-f', podAndService('first', pa!)]);
    assert.equal(r.code, 0, r.stderr);
    const held = await nodePortOf('a', 'first');
    await waitFor(`first on its NodePort ${held}`, async () => (await fetchOnce(held)) === 'first', 60_000);

    r = await kubectl(api('b'), ['apply', '-f', podAndService('second', pb!, held)]);
    assert.equal(r.code, 0, r.stderr);
    const [w, ...more] = warnings(r.stderr);
    assert.deepEqual(more, [], r.stderr);
    assert.match(
      w ?? '',
      new RegExp(
        `^Warning: spec\\.ports\\[0\\]\\.nodePort: port ${held}/TCP is held by another process on this host \\(pid ${agents[0]!.child.pid} \\(".*"\\)\\): ` +
          'the service proxy cannot listen on it and its clients reach that process instead; choose another nodePort, or leave it out to have a free one chosen$',
      ),
      r.stderr,
    );

    const event = await waitFor('the FailedToOpenNodePort event on service/second', async () => {
      const e = await kubectl(api('b'), [
        'get',
        'events',
        '--field-selector',
        'involvedObject.kind=Service,involvedObject.name=second,reason=FailedToOpenNodePort',
        '-o',
        'jsonpath={range .items[*]}{.type} {.source.component} {.message}{"\\n"}{end}',
      ]);
      return e.stdout.trim();
    });
    assert.match(
      event,
      new RegExp(
        `^Warning kube-proxy can't open port "nodePort for default/second" \\(127\\.0\\.0\\.1:${held}/tcp\\), skipping it: ` +
          `EADDRINUSE: address already in use 127\\.0\\.0\\.1:${held}, held by pid ${agents[0]!.child.pid} \\(".*"\\); ` +
          `clients of 127\\.0\\.0\\.1:${held} do not reach this Service: choose another nodePort$`,
      ),
    );
    // The other agent's pod still answers there: nothing of the second agent's was put in its place.
    assert.equal(await fetchOnce(held), 'first');
  },
);

test('a LoadBalancer port another process holds: a SyncLoadBalancerFailed event on the Service, naming the holder', { skip }, async (t) => {
  const squatter = createServer((s) => s.end('squatter'));
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  t.after(() => squatter.close());
  const port = (squatter.address() as AddressInfo).port;
  const r = await kubectl(
    api('b'),
    ['apply', '-f', '-'],
    `apiVersion: v1\nkind: Service\nmetadata: {name: lb}\nspec: {type: LoadBalancer, selector: {app: none}, ports: [{port: ${port}}]}\n`,
  );
  assert.equal(r.code, 0, r.stderr);
  const event = await waitFor('the SyncLoadBalancerFailed event on service/lb', async () => {
    const e = await kubectl(api('b'), [
      'get',
      'events',
      '--field-selector',
      'involvedObject.kind=Service,involvedObject.name=lb,reason=SyncLoadBalancerFailed',
      '-o',
      'jsonpath={range .items[*]}{.type} {.message}{"\\n"}{end}',
    ]);
    return e.stdout.trim();
  });
  assert.match(
    event,
    new RegExp(
      `^Warning Error syncing load balancer: failed to ensure load balancer: can't open port "loadBalancer for default/lb" \\(127\\.0\\.0\\.1:${port}/tcp\\): ` +
        `EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}, held by pid ${process.pid} \\(".*"\\); clients of 127\\.0\\.0\\.1:${port} do not reach this Service: choose another port$`,
    ),
  );
});
