// The HTTP prober against real node:http/node:https servers written here (after pkg/probe/http's
// http_test.go): headers, User-Agent, Host, status codes, timeout, redirects, truncation, proxies, TLS.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Container, HTTPGetAction } from '../../src/api/types.js';
import { RealClock } from '../../src/util/clock.js';
import { doHTTPProbe, newRequestForHTTPGetAction } from '../../src/prober/http.js';

const clock = new RealClock();
const UA = 'kube-probe/1.35';
const container: Container = { name: 'c', ports: [{ name: 'web', containerPort: 0 }] };

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const servers: (http.Server | https.Server)[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

/** Resolves once the server no longer listens (its connections ended). */
function closed(server: http.Server | https.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function serve(handler: Handler, host = '127.0.0.1'): Promise<{ port: number; seen: http.IncomingMessage[] }> {
  const seen: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  server.on('clientError', () => {});
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, host, r));
  return { port: (server.address() as AddressInfo).port, seen };
}

function probe(action: Partial<HTTPGetAction> & { port: number | string }, timeoutSeconds = 1, podIP = '127.0.0.1') {
  const req = newRequestForHTTPGetAction({ path: '/', ...action } as HTTPGetAction, container, podIP, UA);
  return doHTTPProbe(req, timeoutSeconds, clock);
}

const ok: Handler = (_req, res) => res.end('ok body');

test('default request headers: Host, User-Agent kube-probe, Accept */*, no keep-alive, no compression', async () => {
  const { port, seen } = await serve(ok);
  const out = await probe({ port, path: '/healthz?x=1' });
  assert.deepEqual(out, { result: 'success', output: 'ok body' });
  const req = seen[0]!;
  assert.equal(req.url, '/healthz?x=1');
  assert.deepEqual(req.rawHeaders, ['Host', `127.0.0.1:${port}`, 'User-Agent', UA, 'Accept', '*/*', 'Connection', 'close']);
});

test('custom headers accumulate under the canonical name and are sent sorted after Host and User-Agent', async () => {
  const { port, seen } = await serve(ok);
  await probe({
    port,
    httpHeaders: [
      { name: 'x-zeta', value: 'z' },
      { name: 'X-Custom', value: 'a' },
      { name: 'x-custom', value: 'b' },
    ],
  });
  assert.deepEqual(seen[0]!.rawHeaders, [
    'Host',
    `127.0.0.1:${port}`,
    'User-Agent',
    UA,
    'Accept',
    '*/*',
    'X-Custom',
    'a',
    'X-Custom',
    'b',
    'X-Zeta',
    'z',
    'Connection',
    'close',
  ]);
});

test('User-Agent: default, override, and an empty value suppresses it', async () => {
  const { port, seen } = await serve(ok);
  const cases: [HTTPGetAction['httpHeaders'], string | undefined][] = [
    [[], UA],
    [[{ name: 'User-Agent', value: 'my-agent/2' }], 'my-agent/2'],
    [[{ name: 'user-agent', value: '' }], undefined],
  ];
  for (const [headers, expected] of cases) {
    await probe({ port, httpHeaders: headers });
    assert.equal(seen.at(-1)!.headers['user-agent'], expected, JSON.stringify(headers));
  }
});

test('Accept: default */*, override, and an empty value removes it', async () => {
  const { port, seen } = await serve(ok);
  for (const [headers, expected] of [
    [[], '*/*'],
    [[{ name: 'Accept', value: 'application/json' }], 'application/json'],
    [[{ name: 'Accept', value: '' }], undefined],
  ] as const) {
    await probe({ port, httpHeaders: [...headers] });
    assert.equal(seen.at(-1)!.headers['accept'], expected);
  }
});

test('a Host header sets the virtual host', async () => {
  const { port, seen } = await serve(ok);
  await probe({ port, httpHeaders: [{ name: 'Host', value: 'example.com' }] });
  assert.equal(seen[0]!.headers.host, 'example.com');
  assert.equal(seen[0]!.rawHeaders.filter((h) => h.toLowerCase() === 'host').length, 1);
});

test('httpGet.host overrides the pod IP; the pod IP is used otherwise', async () => {
  const { port, seen } = await serve(ok);
  assert.equal((await probe({ port, host: '127.0.0.1' }, 1, '10.255.255.1')).result, 'success');
  assert.equal((await probe({ port }, 1, '127.0.0.1')).result, 'success');
  assert.equal(seen.length, 2);
});

test('status codes map to success, warning and failure; the body never appears in a failure', async () => {
  const cases: [number, 'success' | 'warning' | 'failure', string][] = [
    [200, 'success', 'the body'],
    [204, 'success', ''],
    [299, 'success', 'the body'],
    [300, 'warning', 'Probe terminated redirects, Response body: the body'],
    [304, 'warning', 'Probe terminated redirects, Response body: '],
    [301, 'warning', 'Probe terminated redirects, Response body: the body'], // no Location: not followed
    [399, 'warning', 'Probe terminated redirects, Response body: the body'],
    [400, 'failure', 'HTTP probe failed with statuscode: 400'],
    [404, 'failure', 'HTTP probe failed with statuscode: 404'],
    [500, 'failure', 'HTTP probe failed with statuscode: 500'],
    [503, 'failure', 'HTTP probe failed with statuscode: 503'],
  ];
  const { port } = await serve((req, res) => {
    const code = Number(req.url!.slice(1));
    res.writeHead(code);
    res.end(code === 204 || code === 304 ? undefined : 'the body');
  });
  for (const [code, result, output] of cases) {
    assert.deepEqual(await probe({ port, path: `/${code}` }), { result, output }, `status ${code}`);
  }
});

test('connection refused reads as Go prints it', async () => {
  const { port } = await serve(ok);
  await closed(servers.pop()!);
  assert.deepEqual(await probe({ port, path: '/healthz' }), {
    result: 'failure',
    output: `Get "http://127.0.0.1:${port}/healthz": dial tcp 127.0.0.1:${port}: connect: connection refused`,
  });
});

test('a server that answers nothing within the timeout', async () => {
  const { port } = await serve(() => {
    /* never answers */
  });
  assert.deepEqual(await probe({ port, path: '/slow' }, 1), {
    result: 'failure',
    output: `Get "http://127.0.0.1:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
  });
});

test('a body that stalls past the timeout is a body read error (discarded)', async () => {
  const { port } = await serve((_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
  });
  const out = await probe({ port }, 1);
  assert.equal(out.result, 'failure');
  assert.equal(out.output, '');
  assert.match(out.error!.message, /Client.Timeout or context cancellation while reading body/);
});

test('a server closing without a response is EOF', async () => {
  const { port } = await serve((req) => req.socket.destroy());
  assert.deepEqual(await probe({ port }), { result: 'failure', output: `Get "http://127.0.0.1:${port}/": EOF` });
});

test('bodies are read up to 10 KiB and silently truncated', async () => {
  const { port } = await serve((_req, res) => res.end('a'.repeat(20 * 1024)));
  const out = await probe({ port });
  assert.equal(out.result, 'success');
  assert.equal(out.output, 'a'.repeat(10 * 1024));
});

test('redirects to the same host are followed, to another port too', async () => {
  const target = await serve((req, res) => res.end(`landed ${req.url}`));
  const { port, seen } = await serve((req, res) => {
    if (req.url === '/same') res.writeHead(302, { location: '/final' }).end();
    else if (req.url === '/other-port') res.writeHead(301, { location: `http://127.0.0.1:${target.port}/there` }).end();
    else if (req.url === '/permanent') res.writeHead(308, { location: '/final' }).end();
    else res.end(`final ${req.url}`);
  });
  assert.deepEqual(await probe({ port, path: '/same' }), { result: 'success', output: 'final /final' });
  assert.equal(seen[1]!.headers.referer, `http://127.0.0.1:${port}/same`);
  assert.deepEqual(await probe({ port, path: '/permanent' }), { result: 'success', output: 'final /final' });
  assert.deepEqual(await probe({ port, path: '/other-port' }), { result: 'success', output: 'landed /there' });
  assert.equal(target.seen[0]!.headers.host, `127.0.0.1:${target.port}`);
});

test('a redirect to another hostname is not followed: a warning with the body', async () => {
  const other = await serve(ok);
  const { port } = await serve((_req, res) => {
    res.writeHead(302, { location: `http://localhost:${other.port}/` });
    res.end('<a href="elsewhere">Found</a>.');
  });
  assert.deepEqual(await probe({ port }), {
    result: 'warning',
    output: 'Probe terminated redirects, Response body: <a href="elsewhere">Found</a>.',
  });
  assert.equal(other.seen.length, 0);
});

test('a redirect loop stops after 10 redirects', async () => {
  const { port, seen } = await serve((_req, res) => res.writeHead(302, { location: '/loop' }).end());
  assert.deepEqual(await probe({ port, path: '/start' }), { result: 'failure', output: 'Get "/loop": stopped after 10 redirects' });
  assert.equal(seen.length, 10);
});

test('a custom Host header survives relative redirects only', async () => {
  const { port, seen } = await serve((req, res) => {
    if (req.url === '/relative') res.writeHead(302, { location: '/done' }).end();
    else if (req.url === '/absolute') res.writeHead(302, { location: `http://127.0.0.1:${port}/done` }).end();
    else res.end('done');
  });
  const host = [{ name: 'Host', value: 'vhost.example' }];
  await probe({ port, path: '/relative', httpHeaders: host });
  assert.deepEqual(
    seen.map((r) => r.headers.host),
    ['vhost.example', 'vhost.example'],
  );
  await probe({ port, path: '/absolute', httpHeaders: host });
  assert.deepEqual(
    seen.slice(2).map((r) => r.headers.host),
    ['vhost.example', `127.0.0.1:${port}`],
  );
});

test('proxy environment variables are ignored', async () => {
  const { port } = await serve(ok);
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy, HTTPS_PROXY: process.env.HTTPS_PROXY };
  process.env.HTTP_PROXY = 'http://127.0.0.1:1';
  process.env.http_proxy = 'http://127.0.0.1:1';
  process.env.HTTPS_PROXY = 'http://127.0.0.1:1';
  try {
    assert.deepEqual(await probe({ port }), { result: 'success', output: 'ok body' });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test(
  'HTTPS with a self-signed certificate: verification is off',
  { skip: haveOpenssl() ? false : 'openssl not found: cannot make a self-signed certificate' },
  async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'podvisor-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          path.join(dir, 'key.pem'),
          '-out',
          path.join(dir, 'cert.pem'),
          '-days',
          '1',
          '-subj',
          '/CN=self-signed.invalid',
        ],
        { stdio: 'ignore' },
      );
      const seen: http.IncomingMessage[] = [];
      const server = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) }, (req, res) => {
        seen.push(req);
        res.end('secure');
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      assert.deepEqual(await probe({ port, scheme: 'HTTPS', path: '/tls' }), { result: 'success', output: 'secure' });
      assert.equal(seen[0]!.headers['user-agent'], UA);
      // An IP address gets no SNI.
      assert.equal((seen[0]!.socket as import('node:tls').TLSSocket & { servername?: string | false }).servername, false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('ports: numbers, container port names, numeric strings; bad ones are errors', () => {
  const c: Container = { name: 'c', ports: [{ name: 'web', containerPort: 8080 }] };
  const build = (port: number | string) => newRequestForHTTPGetAction({ port } as HTTPGetAction, c, '10.0.0.5', UA);
  assert.equal(build(81).port, 81);
  assert.equal(build('web').port, 8080);
  assert.equal(build('9090').port, 9090);
  assert.throws(() => build('nosuch'), { message: 'strconv.Atoi: parsing "nosuch": invalid syntax' });
  assert.throws(() => build(0), { message: 'invalid port number: 0' });
  assert.throws(() => build(70000), { message: 'invalid port number: 70000' });
});

test('request building: scheme lower-cased, empty path, IPv6 bracketed in the URL', async () => {
  const { port } = await serve(ok, '::1').catch(() => ({ port: 0 }));
  if (port === 0) return; // no IPv6 loopback here
  const req = newRequestForHTTPGetAction({ port, path: '', scheme: 'HTTP' } as HTTPGetAction, container, '::1', UA);
  assert.equal(req.scheme, 'http');
  assert.deepEqual(await doHTTPProbe(req, 1, clock), { result: 'success', output: 'ok body' });
  await closed(servers.pop()!);
  const out = await doHTTPProbe(req, 1, clock);
  assert.equal(out.output, `Get "http://[::1]:${port}": dial tcp [::1]:${port}: connect: connection refused`);
});
