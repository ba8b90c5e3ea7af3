// The resource table's row for core/v1 Namespaces: the namespaces the node's pods use (and `default`),
// each Active, read-only.

import type { KubeBackend, KubeObject, Storage } from '../backend.js';
import { resource } from '../resource-def.js';

function namespaceObject(name: string): KubeObject {
  return {
    kind: 'Namespace',
    apiVersion: 'v1',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  } as KubeObject;
}

function namespaceStorage(b: KubeBackend): Storage {
  return {
    list: () => ({ items: b.namespaces().sort().map(namespaceObject), resourceVersion: b.listPods().resourceVersion }),
    get: (_ns, name) => (b.namespaces().includes(name) ? namespaceObject(name) : undefined),
  };
}

export const namespaces = resource({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  resource: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  verbs: ['get', 'list'],
  storage: namespaceStorage,
});
