// The fields of networking.k8s.io/v1 Ingress and IngressClass (k8s.io/api/networking/v1 types.go),
// for strict decoding: added to the API schema by schema.ts.

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const obj = (ref: string) => ({ type: 'object', ref }) as const;
const arr = <T>(items: T) => ({ type: 'array', items }) as const;

/** By type name, each field's type (the shape of schema.ts's FieldType). */
export const networkingTypes = {
  'networking/v1.Ingress': {
    apiVersion: str,
    kind: str,
    metadata: obj('meta/v1.ObjectMeta'),
    spec: obj('networking/v1.IngressSpec'),
    status: obj('networking/v1.IngressStatus'),
  },
  'networking/v1.IngressSpec': {
    ingressClassName: str,
    defaultBackend: obj('networking/v1.IngressBackend'),
    tls: arr(obj('networking/v1.IngressTLS')),
    rules: arr(obj('networking/v1.IngressRule')),
  },
  'networking/v1.IngressBackend': {
    service: obj('networking/v1.IngressServiceBackend'),
    resource: obj('networking/v1.TypedLocalObjectReference'),
  },
  'networking/v1.TypedLocalObjectReference': { apiGroup: str, kind: str, name: str },
  'networking/v1.IngressServiceBackend': { name: str, port: obj('networking/v1.ServiceBackendPort') },
  'networking/v1.ServiceBackendPort': { name: str, number: int },
  'networking/v1.IngressTLS': { hosts: arr(str), secretName: str },
  'networking/v1.IngressRule': { host: str, http: obj('networking/v1.HTTPIngressRuleValue') },
  'networking/v1.HTTPIngressRuleValue': { paths: arr(obj('networking/v1.HTTPIngressPath')) },
  'networking/v1.HTTPIngressPath': { path: str, pathType: str, backend: obj('networking/v1.IngressBackend') },
  'networking/v1.IngressStatus': { loadBalancer: obj('networking/v1.IngressLoadBalancerStatus') },
  'networking/v1.IngressLoadBalancerStatus': { ingress: arr(obj('networking/v1.IngressLoadBalancerIngress')) },
  'networking/v1.IngressLoadBalancerIngress': { ip: str, hostname: str, ports: arr(obj('networking/v1.IngressPortStatus')) },
  'networking/v1.IngressPortStatus': { port: int, protocol: str, error: str },
  'networking/v1.IngressClass': {
    apiVersion: str,
    kind: str,
    metadata: obj('meta/v1.ObjectMeta'),
    spec: obj('networking/v1.IngressClassSpec'),
  },
  'networking/v1.IngressClassSpec': { controller: str, parameters: obj('networking/v1.IngressClassParametersReference') },
  'networking/v1.IngressClassParametersReference': { apiGroup: str, kind: str, name: str, scope: str, namespace: str },
} as const;
