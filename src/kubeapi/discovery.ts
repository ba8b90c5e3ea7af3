// Discovery documents: /api, /api/v1, /apis (with metrics.k8s.io for `kubectl top`), /version,
// and the minimal /openapi/v2 document kubectl's apply and create insist on.

export const serverVersion = {
  major: '1',
  minor: '30',
  gitVersion: 'v1.30.0+podvisor',
  gitCommit: '',
  gitTreeState: 'clean',
  buildDate: '1970-01-01T00:00:00Z',
  goVersion: 'n/a',
  compiler: 'n/a',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

export function apiVersions(serverAddress: string): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

const podVerbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

export const coreV1Resources = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [
    { name: 'configmaps', singularName: '', namespaced: true, kind: 'ConfigMap', verbs: ['create', 'delete', 'get', 'list', 'patch', 'update'], shortNames: ['cm'] },
    { name: 'events', singularName: '', namespaced: true, kind: 'Event', verbs: ['get', 'list', 'watch'], shortNames: ['ev'] },
    { name: 'namespaces', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['get', 'list'], shortNames: ['ns'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'Pod', verbs: podVerbs, shortNames: ['po'], categories: ['all'] },
    { name: 'pods/attach', singularName: '', namespaced: true, kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    { name: 'secrets', singularName: '', namespaced: true, kind: 'Secret', verbs: ['create', 'delete', 'get', 'list', 'patch', 'update'] },
  ],
};

export const metricsGroup = 'metrics.k8s.io';
export const metricsGroupVersion = 'metrics.k8s.io/v1beta1';

const metricsGroupDoc = {
  name: metricsGroup,
  versions: [{ groupVersion: metricsGroupVersion, version: 'v1beta1' }],
  preferredVersion: { groupVersion: metricsGroupVersion, version: 'v1beta1' },
};

export const apiGroupList = { kind: 'APIGroupList', apiVersion: 'v1', groups: [metricsGroupDoc] };

export const metricsApiGroup = { kind: 'APIGroup', apiVersion: 'v1', ...metricsGroupDoc };

export const metricsResources = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: metricsGroupVersion,
  resources: [{ name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] }],
};

function protoString(field: number, s: string | Buffer): Buffer {
  const b = typeof s === 'string' ? Buffer.from(s) : s;
  // Lengths here stay below 128, so one varint byte suffices.
  return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]);
}

/**
 * openapi_v2.Document{swagger:"2.0", info:{title, version}} in protobuf, with no definitions: kubectl
 * finds no schema for v1/Pod, skips client-side validation and uses its built-in strategic-merge
 * metadata. Served as application/octet-stream, as kube-apiserver serves it.
 */
export const openapiV2Protobuf: Buffer = Buffer.concat([
  protoString(1, '2.0'),
  protoString(2, Buffer.concat([protoString(1, 'Kubernetes'), protoString(2, serverVersion.gitVersion)])),
]);

export const openapiV2JSON = { swagger: '2.0', info: { title: 'Kubernetes', version: serverVersion.gitVersion }, paths: {}, definitions: {} };
