// networking.k8s.io/v1 Ingress and IngressClass validation in the API server's words
// (pkg/apis/networking/validation) and the DefaultIngressClass admission.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFieldError } from '../../src/api/field-errors.js';
import { validateIngress, validateIngressClass, defaultIngressClass, type IngressClass } from '../../src/api/validation/networking.js';
import { admitDefaultIngressClass } from '../../src/kubeapi/ingress-strategy.js';

const meta = { name: 'demo', namespace: 'default' };
const messages = (errs: ReturnType<typeof validateIngress>) => errs.map(formatFieldError);

test('an Ingress: rules or a defaultBackend, hosts, paths by pathType, backends, the class annotation', () => {
  assert.deepEqual(messages(validateIngress({ metadata: meta, spec: {} })), [
    'spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified',
  ]);
  const errs = messages(
    validateIngress({
      metadata: { ...meta, annotations: { 'kubernetes.io/ingress.class': 'nginx' } },
      spec: {
        ingressClassName: 'podvisor',
        rules: [
          { host: '1.2.3.4', http: { paths: [{ path: 'no-slash', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } },
          {
            host: '*.a.*.com',
            http: { paths: [{ path: '/x', pathType: 'Regex', backend: { service: { name: 'web', port: { number: 80, name: 'http' } } } }] },
          },
          { host: 'ok.localhost', http: { paths: [{ path: '/a/../b', backend: { service: { name: 'Web' } } } as never] } },
          { host: 'b.localhost', http: { paths: [{ path: '/x/', pathType: 'Exact', backend: {} }] } },
        ],
        tls: [{ hosts: ['*.ok.localhost'], secretName: 'Bad_Name' }],
      },
    }),
  );
  assert.deepEqual(errs, [
    'annotations.kubernetes.io/ingress.class: Invalid value: "nginx": must match `ingressClassName` when both are specified',
    'spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address',
    'spec.rules[0].http.paths[0].path: Invalid value: "no-slash": must be an absolute path',
    "spec.rules[1].host: Invalid value: \"*.a.*.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    'spec.rules[1].http.paths[0].backend: Invalid value: "": cannot set both port name & port number',
    'spec.rules[1].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
    'spec.rules[2].http.paths[0].pathType: Required value: pathType must be specified',
    'spec.rules[3].http.paths[0].backend: Invalid value: "": resource or service backend is required',
    "spec.tls[0].secretName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ]);
  assert.deepEqual(messages(validateIngress({ metadata: meta, spec: { defaultBackend: { service: { name: 'web', port: {} }, resource: undefined } } })), [
    'spec.defaultBackend: Required value: port name or number is required',
  ]);
});

test('an IngressClass: a domain-prefixed controller, parameters scoped (Cluster by default)', () => {
  assert.deepEqual(validateIngressClass({ metadata: { name: 'p' }, spec: { controller: 'podvisor.io/ingress-controller' } }), []);
  assert.deepEqual(messages(validateIngressClass({ metadata: { name: 'p' }, spec: { controller: 'no-slash' } })), [
    'spec.controller: Invalid value: "no-slash": must be a domain-prefixed path (such as "acme.io/foo")',
  ]);
  const defaulted = defaultIngressClass<IngressClass>({ metadata: { name: 'p' }, spec: { controller: 'a.io/b', parameters: { kind: 'K', name: 'n' } } });
  assert.equal(defaulted.spec?.parameters?.scope, 'Cluster');
  assert.deepEqual(
    messages(validateIngressClass({ metadata: { name: 'p' }, spec: { controller: 'a.io/b', parameters: { kind: 'K', name: 'n', scope: 'Namespace' } } })),
    ["spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"],
  );
});

test('DefaultIngressClass: the default class for an Ingress naming none; none when the annotation names one; refused with two defaults', () => {
  const cls = (name: string, isDefault: boolean) => ({
    metadata: { name, ...(isDefault ? { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } : {}) },
  });
  const ing = { metadata: meta, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } };
  assert.equal(admitDefaultIngressClass(ing, [cls('other', false), cls('podvisor', true)]).spec?.ingressClassName, 'podvisor');
  assert.equal(admitDefaultIngressClass(ing, [cls('other', false)]).spec?.ingressClassName, undefined);
  const annotated = { ...ing, metadata: { ...meta, annotations: { 'kubernetes.io/ingress.class': 'nginx' } } };
  assert.equal(admitDefaultIngressClass(annotated, [cls('podvisor', true)]).spec?.ingressClassName, undefined);
  assert.throws(() => admitDefaultIngressClass(ing, [cls('a', true), cls('b', true)]), /2 default IngressClasses were found, only 1 allowed/);
});
