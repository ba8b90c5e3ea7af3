// Ingresses on a real `podvisor agent` driven by the real kubectl (1.20 and 1.32) and real HTTP
// clients: `kubectl create ingress` and `kubectl get ing` columns, the built-in IngressClass and its
// admission, host and path routing to two Services of host-process pods (a Service port by number and
// by name, Exact before Prefix, a `*.` wildcard host), X-Forwarded-* headers, 404 for an unknown host,
// 503 with the reason when a backend has no Ready endpoint, TLS by SNI from a kubernetes.io/tls Secret
// over HTTP/1.1 and HTTP/2 (ALPN), and a WebSocket through the proxy.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { test } from 'node:test';
import WebSocket from 'ws';
import { freePorts } from '../fixtures/ports.js';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl, kubectl132Path, kubectlPath, runKubectl, waitFor } from '../kubeapi/harness.js';

const skip = kubectlPath ? false : 'kubectl is not installed';
const env = useKubectlAgent(skip, ['--ingress-http-port', '0', '--ingress-https-port', '0']);
const wsModule = createRequire(import.meta.url).resolve('ws');

type Api = { kubeconfig: string; dir: string };
let api: Api;
let httpPort = 0;
let httpsPort = 0;
let cert = '';

/** A host-process pod answering HTTP with what it saw (JSON) and echoing WebSocket messages. */
function backend(name: string, port: number): string {
  const script =
    `const http=require('http');const {WebSocketServer}=require(${JSON.stringify(wsModule)});` +
    `const s=http.createServer((q,r)=>{r.setHeader('content-type','application/json');r.end(JSON.stringify({name:'${name}',url:q.url,headers:q.headers}))});` +
    `new WebSocketServer({server:s}).on('connection',c=>c.on('message',m=>c.send('${name}:'+m)));` +
    `s.listen(${port},'127.0.0.1')`;
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: {app: ${name}}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: node
    command: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(script)}]
    ports: [{containerPort: ${port}, name: http}]
    readinessProbe: {tcpSocket: {port: ${port}}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: ${name}}
spec:
  selector: {app: ${name}}
  ports: [{name: http, port: 80, targetPort: ${port}}, {name: alt, port: 8080, targetPort: ${port}}]
`;
}

const ingressYaml = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: routes}
spec:
  tls: [{hosts: [secure.localhost], secretName: secure-tls}]
  rules:
  - host: web.localhost
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {name: alt}}}}
      - {path: /api/exact, pathType: Exact, backend: {service: {name: web, port: {name: http}}}}
      - {path: /down, pathType: ImplementationSpecific, backend: {service: {name: down, port: {number: 80}}}}
  - host: "*.wild.localhost"
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]
  - host: secure.localhost
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
`;

const downService = `apiVersion: v1
kind: Service
metadata: {name: down}
spec:
  selector: {app: nothing-here}
  ports: [{port: 80, targetPort: 9}]
`;

async function apply(name: string, yaml: string): Promise<void> {
  const file = join(env.dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  const r = await kubectl(api, ['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A plain HTTP request to the ingress proxy for host and path. */
function get(host: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: httpPort, path, headers: { host: `${host}:${httpPort}` }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

const seenBy = (a: Answer) => (a.status === 200 ? (JSON.parse(a.body) as { name: string; url: string; headers: Record<string, string> }) : undefined);

/** The backends, the TLS Secret and the Ingress, made once for the file's tests (after the agent has started). */
let made: Promise<void> | undefined;
const setup = () => (made ??= makeAll());

async function makeAll(): Promise<void> {
  api = { kubeconfig: join(env.root, 'kubeconfig'), dir: mkdtempSync(join(env.dir, 'kubectl-')) };
  const [webPort, apiPort] = await freePorts(2);
  await apply('web', backend('web', webPort!));
  await apply('api', backend('api', apiPort!));
  await apply('down', downService);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-keyout', join(env.dir, 'tls.key'), '-out', join(env.dir, 'tls.crt'), '-subj', '/CN=secure.localhost', '-addext', 'subjectAltName=DNS:secure.localhost',
  ], { stdio: 'ignore' }); // prettier-ignore
  cert = readFileSync(join(env.dir, 'tls.crt'), 'utf8');
  const r = await kubectl(api, ['create', 'secret', 'tls', 'secure-tls', '--cert', join(env.dir, 'tls.crt'), '--key', join(env.dir, 'tls.key')]);
  assert.equal(r.code, 0, r.stderr);
  await apply('routes', ingressYaml);
  const ports = await waitFor(
    'the Ingress status with the proxy ports',
    async () => {
      const out = (
        await kubectl(api, ['get', 'ing', 'routes', '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip} {.status.loadBalancer.ingress[0].ports[*].port}'])
      ).stdout;
      const [ip, h, s] = out.trim().split(' ');
      return ip === '127.0.0.1' && h && s ? [Number(h), Number(s)] : undefined;
    },
    60_000,
  );
  [httpPort, httpsPort] = ports as [number, number];
  await waitFor(
    'both backends Ready through the ingress',
    async () => seenBy(await get('web.localhost', '/'))?.name === 'web' && seenBy(await get('a.wild.localhost', '/'))?.name === 'api',
    90_000,
  );
}

test('the built-in IngressClass podvisor is the default; an Ingress without a class gets it; kubectl get ing and ingressclass columns', { skip }, async () => {
  await setup();
  let r = await kubectl(api, ['get', 'ingressclass']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE\s*\npodvisor\s+podvisor\.io\/ingress-controller\s+<none>\s+\S+\s*\n$/);
  r = await kubectl(api, ['get', 'ingressclass', 'podvisor', '-o', 'jsonpath={.metadata.annotations}']);
  assert.match(r.stdout, /"ingressclass\.kubernetes\.io\/is-default-class":"true"/);
  r = await kubectl(api, ['get', 'ing']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\s*\n/);
  assert.match(r.stdout, /\nroutes\s+podvisor\s+web\.localhost,\*\.wild\.localhost,secure\.localhost\s+127\.0\.0\.1\s+80, 443\s+\S+\s*\n/);
});

test('kubectl create ingress (1.20 and 1.32, whose typed client sends protobuf) makes Ingresses the proxy serves', { skip }, async () => {
  await setup();
  for (const [bin, name] of [[kubectlPath!, 'made-by-kubectl'], ...(kubectl132Path ? [[kubectl132Path, 'made-by-kubectl-132']] : [])] as Array<
    [string, string]
  >) {
    const r = await runKubectl(bin, api, ['create', 'ingress', name, `--rule=${name}.localhost/only*=api:80`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`ingress.networking.k8s.io/${name} created`));
    const got = await runKubectl(bin, api, ['get', 'ing', name]);
    assert.match(got.stdout, new RegExp(`^NAME\\s+CLASS\\s+HOSTS\\s+ADDRESS\\s+PORTS\\s+AGE\\s*\\n${name}\\s+podvisor\\s+${name}\\.localhost\\s+`));
    const a = await waitFor(`${name} routed`, async () => seenBy(await get(`${name}.localhost`, '/only/x')));
    assert.equal(a.name, 'api');
    assert.equal((await get(`${name}.localhost`, '/other')).status, 404);
    assert.equal((await runKubectl(bin, api, ['delete', 'ing', name])).code, 0);
  }
});

test('host and path routing: Prefix element-wise, Exact before Prefix, ports by number and name, a wildcard host, X-Forwarded-*', { skip }, async () => {
  await setup();
  const at = async (host: string, path: string) => seenBy(await get(host, path))?.name;
  assert.equal(await at('web.localhost', '/'), 'web');
  assert.equal(await at('web.localhost', '/apixyz'), 'web', 'Prefix /api does not match /apixyz');
  assert.equal(await at('web.localhost', '/api'), 'api');
  assert.equal(await at('web.localhost', '/api/'), 'api');
  assert.equal(await at('web.localhost', '/api/v1?x=1'), 'api');
  assert.equal(await at('web.localhost', '/api/exact'), 'web', 'the longer Exact path wins');
  assert.equal(await at('web.localhost', '/api/exact/more'), 'api');
  assert.equal(await at('one.wild.localhost', '/x'), 'api');
  assert.equal((await get('two.one.wild.localhost', '/x')).status, 404, 'a wildcard stands for one label');
  const seen = seenBy(await get('web.localhost', '/api/v1?q=2'))!;
  assert.equal(seen.url, '/api/v1?q=2');
  assert.equal(seen.headers.host, `web.localhost:${httpPort}`);
  assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(seen.headers['x-forwarded-proto'], 'http');
  assert.equal(seen.headers['x-forwarded-host'], `web.localhost:${httpPort}`);
  assert.equal(seen.headers['x-forwarded-port'], String(httpPort));
});

test('404 for a host no rule names; 503 with the reason when the backend has no Ready endpoint', { skip }, async () => {
  await setup();
  const unknown = await get('nobody.localhost', '/');
  assert.equal(unknown.status, 404);
  const down = await get('web.localhost', '/down');
  assert.equal(down.status, 503);
  assert.equal(down.body, 'no ready endpoints for service default/down port 80\n');
});

test('TLS by SNI from the kubernetes.io/tls Secret, over HTTP/1.1 and HTTP/2', { skip }, async () => {
  await setup();
  const h1 = await new Promise<Answer>((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: httpsPort, servername: 'secure.localhost', ca: cert, path: '/tls', headers: { host: 'secure.localhost' }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.equal(h1.status, 200);
  const seen = JSON.parse(h1.body) as { name: string; headers: Record<string, string> };
  assert.equal(seen.name, 'web');
  assert.equal(seen.headers['x-forwarded-proto'], 'https');
  const session = h2connect(`https://secure.localhost:${httpsPort}`, {
    createConnection: () => tlsConnect({ host: '127.0.0.1', port: httpsPort, servername: 'secure.localhost', ca: cert, ALPNProtocols: ['h2'] }),
  });
  try {
    const h2 = await new Promise<{ status: number; body: string; alpn: string }>((resolve, reject) => {
      session.on('error', reject);
      const s = session.request({ ':path': '/over-h2' });
      let status = 0;
      let body = '';
      s.on('response', (h) => (status = Number(h[':status'])));
      s.setEncoding('utf8');
      s.on('data', (d: string) => (body += d));
      s.on('end', () => resolve({ status, body, alpn: String(session.alpnProtocol) }));
      s.on('error', reject);
      s.end();
    });
    assert.equal(h2.alpn, 'h2');
    assert.equal(h2.status, 200);
    assert.equal((JSON.parse(h2.body) as { url: string }).url, '/over-h2');
  } finally {
    session.close();
  }
});

test('a WebSocket through the ingress proxy (the Upgrade passed through)', { skip }, async () => {
  await setup();
  const ws = new WebSocket(`ws://127.0.0.1:${httpPort}/api/socket`, { headers: { host: 'web.localhost' } });
  const reply = await new Promise<string>((resolve, reject) => {
    ws.on('open', () => ws.send('hello'));
    ws.on('message', (m: Buffer) => resolve(String(m)));
    ws.on('error', reject);
  });
  ws.close();
  assert.equal(reply, 'api:hello');
  const wss = new WebSocket(`wss://127.0.0.1:${httpsPort}/socket`, {
    ca: cert,
    servername: 'secure.localhost',
    headers: { host: 'secure.localhost' },
  } as WebSocket.ClientOptions);
  const secure = await new Promise<string>((resolve, reject) => {
    wss.on('open', () => wss.send('tls'));
    wss.on('message', (m: Buffer) => resolve(String(m)));
    wss.on('error', reject);
  });
  wss.close();
  assert.equal(secure, 'web:tls');
});

test('Ingresses of another class (ingressClassName or the kubernetes.io/ingress.class annotation) are left alone', { skip }, async () => {
  await setup();
  const rule = (host: string) =>
    `  rules: [{host: ${host}, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]\n`;
  await apply(
    'others',
    'apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: nginx}\nspec: {controller: k8s.io/ingress-nginx}\n---\n' +
      'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: by-name}\nspec:\n  ingressClassName: nginx\n' +
      rule('by-name.localhost') +
      '---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: by-annotation, annotations: {kubernetes.io/ingress.class: nginx}}\nspec:\n' +
      rule('by-annotation.localhost'),
  );
  // One of podvisor's class made after them: once it is served, the proxy has seen the others too.
  await apply(
    'mine',
    'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: mine}\nspec:\n  ingressClassName: podvisor\n' + rule('mine.localhost'),
  );
  await waitFor('mine served', async () => seenBy(await get('mine.localhost', '/'))?.name === 'web');
  for (const name of ['by-name', 'by-annotation']) {
    assert.equal((await get(`${name}.localhost`, '/')).status, 404);
    const r = await kubectl(api, ['get', 'ing', name, '-o', 'jsonpath={.spec.ingressClassName}|{.status.loadBalancer}']);
    assert.equal(r.stdout, `${name === 'by-name' ? 'nginx' : ''}|{}`);
  }
  const r = await kubectl(api, ['get', 'ing', 'mine', '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip}']);
  assert.equal(r.stdout, '127.0.0.1');
});

test('a served Ingress with a resource backend is told as a Warning event (Unsupported)', { skip }, async () => {
  await setup();
  await apply(
    'resource-backend',
    'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: resource-backend}\nspec:\n  defaultBackend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: static}}\n',
  );
  const message = await waitFor('the Warning event', async () => {
    const r = await kubectl(api, ['get', 'events', '-o', 'jsonpath={range .items[*]}{.involvedObject.name} {.type} {.reason} {.message}{"\\n"}{end}']);
    return r.stdout.split('\n').find((l) => l.startsWith('resource-backend Warning Unsupported '));
  });
  assert.match(message, /spec\.defaultBackend: backend resource StorageBucket\/static: the podvisor ingress proxy sends requests to Service backends only/);
});
