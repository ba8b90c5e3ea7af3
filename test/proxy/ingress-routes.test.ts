// The ingress proxy's route table and what it is built from, on plain objects: the Ingress API's
// path matching (Prefix element by element, Exact, ImplementationSpecific as Prefix; the longest
// path first, Exact before Prefix of the same length), hosts (exact, then a `*.` wildcard of one label,
// then rules without a host), the defaultBackend, TLS Secrets by SNI, the Ready endpoints of a backend
// from EndpointSlices with the 503's reason, the URLs up and run print, and the status written.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Ingress } from '../../src/api/validation/networking.js';
import { backendEndpoints } from '../../src/proxy/ingress-backends.js';
import { ingressClassOf, loadBalancerIngress, unsupportedParts } from '../../src/proxy/ingress-proxy.js';
import { hostMatches, IngressRouteTable, prefixMatches, requestHost } from '../../src/proxy/ingress-routes.js';
import { ingressServices, ingressURLs } from '../../src/proxy/ingress-urls.js';

const svc = (name: string, port: number | string = 80) => ({ service: { name, port: typeof port === 'number' ? { number: port } : { name: port } } });

function ingress(name: string, spec: Ingress['spec'], created = '2026-01-01T00:00:00Z', namespace = 'default'): Ingress {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace, creationTimestamp: created }, spec };
}

const routed = (t: IngressRouteTable, host: string, path: string) => {
  const r = t.route(host, path);
  return 'backend' in r ? `${r.backend.service}:${r.backend.port}` : 404;
};

test('Prefix matches element by element, ignoring a trailing slash, as the Ingress API specifies', () => {
  const els = (p: string) => p.split('/').filter(Boolean);
  const cases: Array<[string, string, boolean]> = [
    ['/', '/anything', true],
    ['/foo', '/foo', true],
    ['/foo', '/foo/', true],
    ['/foo/', '/foo', true],
    ['/foo', '/foo/bar', true],
    ['/foo', '/foobar', false],
    ['/foo/bar', '/foo/bar/baz', true],
    ['/foo/bar', '/foo/barbaz', false],
    ['/aaa/bb', '/aaa/bbb', false],
    ['/aaa/bbb', '/aaa', false],
  ];
  for (const [route, req, want] of cases) assert.equal(prefixMatches(els(route), req), want, `${route} vs ${req}`);
});

test('hosts: exact, a wildcard stands for exactly one label; the Host header without its port', () => {
  assert.ok(hostMatches('foo.bar.com', 'foo.bar.com'));
  assert.ok(hostMatches('*.bar.com', 'foo.bar.com'));
  assert.ok(!hostMatches('*.bar.com', 'bar.com'));
  assert.ok(!hostMatches('*.bar.com', 'baz.foo.bar.com'));
  assert.equal(requestHost('Web.Localhost:8080'), 'web.localhost');
  assert.equal(requestHost('web.localhost.'), 'web.localhost');
  assert.equal(requestHost('[::1]:80'), '::1');
  assert.equal(requestHost(undefined), '');
});

test('the route table: longest path first, Exact before Prefix, ImplementationSpecific as Prefix, host precedence, the default backend', () => {
  const t = new IngressRouteTable([
    ingress('b', {
      rules: [
        {
          host: 'web.localhost',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: svc('root') },
              { path: '/api', pathType: 'Prefix', backend: svc('api-prefix') },
              { path: '/api', pathType: 'Exact', backend: svc('api-exact') },
              { path: '/api/v2', pathType: 'ImplementationSpecific', backend: svc('v2', 'http') },
            ],
          },
        },
        { host: '*.web.localhost', http: { paths: [{ path: '/', pathType: 'Prefix', backend: svc('wild') }] } },
        { http: { paths: [{ path: '/any', pathType: 'Prefix', backend: svc('anyhost') }] } },
      ],
    }),
    ingress('a', { defaultBackend: svc('fallback', 8080) }, '2025-01-01T00:00:00Z'),
  ]);
  assert.equal(routed(t, 'web.localhost', '/'), 'root:80');
  assert.equal(routed(t, 'web.localhost', '/api'), 'api-exact:80');
  assert.equal(routed(t, 'web.localhost', '/api/'), 'api-prefix:80');
  assert.equal(routed(t, 'web.localhost', '/api?x=1'), 'api-exact:80');
  assert.equal(routed(t, 'web.localhost', '/apix'), 'root:80');
  assert.equal(routed(t, 'web.localhost', '/api/v2/x'), 'v2:http');
  assert.equal(routed(t, 'x.web.localhost', '/whatever'), 'wild:80');
  assert.equal(routed(t, 'y.x.web.localhost', '/any/thing'), 'anyhost:80', 'two labels: not the wildcard; the rules without a host');
  assert.equal(routed(t, 'other', '/nothing'), 'fallback:8080', 'the default backend');
  assert.deepEqual(new IngressRouteTable([]).route('x', '/'), { notFound: true });
  assert.deepEqual(
    t.backends().map((b) => b.service),
    ['v2', 'api-exact', 'api-prefix', 'root', 'wild', 'anyhost', 'fallback'],
  );
});

test('the same path in two Ingresses goes to the older one; TLS Secrets by SNI, an entry without hosts for the rest', () => {
  const t = new IngressRouteTable([
    ingress(
      'newer',
      { rules: [{ host: 'h.localhost', http: { paths: [{ path: '/', pathType: 'Prefix', backend: svc('newer') }] } }], tls: [{ secretName: 'any' }] },
      '2026-02-01T00:00:00Z',
    ),
    ingress(
      'older',
      {
        rules: [{ host: 'h.localhost', http: { paths: [{ path: '/', pathType: 'Prefix', backend: svc('older') }] } }],
        tls: [{ hosts: ['*.tls.localhost'], secretName: 'wild' }],
      },
      '2026-01-01T00:00:00Z',
      'other',
    ),
  ]);
  assert.equal(routed(t, 'h.localhost', '/'), 'older:80');
  assert.deepEqual(t.tlsFor('a.tls.localhost'), { hosts: ['*.tls.localhost'], namespace: 'other', secretName: 'wild' });
  assert.equal(t.tlsFor('elsewhere.localhost')?.secretName, 'any');
});

test('a backend: the Service port by number or name, Ready endpoints of its EndpointSlices only, else the reason', () => {
  const service = { metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } };
  const slices = [
    {
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.0.0.1'], conditions: { ready: true } },
        { addresses: ['10.0.0.2'], conditions: { ready: false } },
        { addresses: ['10.0.0.3'], conditions: {} },
      ],
    },
  ];
  const b = { namespace: 'default', service: 'web', ingress: 'default/i' };
  assert.deepEqual(backendEndpoints({ ...b, port: 80 }, service, slices), {
    endpoints: [
      { ip: '10.0.0.1', port: 8080 },
      { ip: '10.0.0.3', port: 8080 },
    ],
  });
  assert.deepEqual(backendEndpoints({ ...b, port: 'http' }, service, slices), backendEndpoints({ ...b, port: 80 }, service, slices));
  assert.deepEqual(backendEndpoints({ ...b, port: 80 }, service, []), { reason: 'no ready endpoints for service default/web port 80' });
  assert.deepEqual(backendEndpoints({ ...b, port: 81 }, service, slices), { reason: 'service default/web has no TCP port 81' });
  assert.deepEqual(backendEndpoints({ ...b, port: 80 }, undefined, slices), { reason: 'service default/web not found' });
});

test('the URLs up and run print; the class an Ingress asks for; the status written', () => {
  const ing = ingress('demo', {
    tls: [{ hosts: ['secure.localhost'], secretName: 's' }],
    rules: [
      { host: 'web.localhost', http: { paths: [{ path: '/', pathType: 'Prefix', backend: svc('web') }] } },
      { host: 'secure.localhost', http: { paths: [{ path: '/app', pathType: 'Prefix', backend: svc('app') }] } },
      { host: '*.wild.localhost', http: { paths: [{ path: '/', pathType: 'Prefix', backend: svc('web') }] } },
    ],
  });
  assert.deepEqual(ingressURLs(ing, { address: '127.0.0.1', httpPort: 8080, httpsPort: 8443 }), [
    'http://web.localhost:8080/',
    'https://secure.localhost:8443/app',
  ]);
  assert.deepEqual(ingressURLs(ing, { address: '127.0.0.1', httpPort: 80, httpsPort: 443 }), ['http://web.localhost/', 'https://secure.localhost/app']);
  assert.deepEqual(ingressURLs(ingress('d', { defaultBackend: svc('web') }), { address: '127.0.0.1', httpPort: 80, httpsPort: 443 }), ['http://127.0.0.1/']);
  assert.deepEqual(ingressServices(ing), ['web', 'app']);
  assert.equal(ingressClassOf({ spec: { ingressClassName: 'a' } }), 'a');
  assert.equal(ingressClassOf({ metadata: { annotations: { 'kubernetes.io/ingress.class': 'nginx' } } }), 'nginx');
  assert.equal(ingressClassOf({}), undefined);
  assert.deepEqual(loadBalancerIngress({ address: '127.0.0.1', httpPort: 80, httpsPort: 443 }), [{ ip: '127.0.0.1' }]);
  assert.deepEqual(loadBalancerIngress({ address: '127.0.0.1', httpPort: 8080, httpsPort: 8443 }), [
    {
      ip: '127.0.0.1',
      ports: [
        { port: 8080, protocol: 'TCP' },
        { port: 8443, protocol: 'TCP' },
      ],
    },
  ]);
});

test('what the proxy does not serve is named (resource backends), for the Warning event', () => {
  const ing = ingress('r', {
    defaultBackend: { resource: { apiGroup: 'k8s.example.com', kind: 'StorageBucket', name: 'static' } },
    rules: [
      {
        host: 'a.localhost',
        http: {
          paths: [
            { path: '/', pathType: 'Prefix', backend: svc('web') },
            { path: '/b', pathType: 'Prefix', backend: { resource: { kind: 'Bucket', name: 'b' } } },
          ],
        },
      },
    ],
  });
  assert.deepEqual(unsupportedParts(ing), [
    'spec.defaultBackend: backend resource StorageBucket/static',
    'spec.rules[0].http.paths[1].backend: backend resource Bucket/b',
  ]);
  assert.deepEqual(unsupportedParts(ingress('ok', { defaultBackend: svc('web') })), []);
});
