// The root CA certificate publisher (pkg/controller/certificates/rootcacertpublisher): every namespace
// that is not being deleted has the ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA that signs
// the API's serving certificate, so a pod verifies the API it reaches through the `kubernetes`
// Service; a change or deletion of the ConfigMap has it written again.

import type { ConfigMap } from '../api/types.js';
import type { NamespaceObject } from '../kubeapi/namespace-strategy.js';
import type { KubeObject } from '../kubeapi/backend.js';
import { canonicalJSON } from '../api/defaults.js';
import type { ControllerContext } from './context.js';
import type { WorkQueue } from './work-queue.js';

export const rootCAConfigMapName = 'kube-root-ca.crt';
const descriptionAnnotation = 'kubernetes.io/description';
const description =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export class RootCACertPublisher {
  readonly queue: WorkQueue;

  constructor(ctx: ControllerContext, rootCA: string) {
    const namespaces = ctx.informer<NamespaceObject>('Namespace');
    const configMaps = ctx.informer<ConfigMap & KubeObject>('ConfigMap');
    this.queue = ctx.workQueue('root-ca-cert-publisher', async (name) => {
      const ns = namespaces.get('', name);
      if (!ns || ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') return;
      const storage = ctx.storage('ConfigMap');
      const current = storage.get(name, rootCAConfigMapName) as (ConfigMap & KubeObject) | undefined;
      const data = { 'ca.crt': rootCA };
      const tolerate = (err: unknown) => {
        const code = (err as { code?: number }).code;
        if (code !== 409 && code !== 404 && code !== 403) throw err;
      };
      if (!current) {
        const cm = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: rootCAConfigMapName, namespace: name, annotations: { [descriptionAnnotation]: description } },
          data,
        };
        await storage.create!(cm as KubeObject, {}).catch(tolerate);
        return;
      }
      if (canonicalJSON(current.data ?? {}) === canonicalJSON(data) && current.metadata?.annotations?.[descriptionAnnotation] === description) return;
      const next = {
        ...current,
        metadata: { ...current.metadata, annotations: { ...(current.metadata?.annotations ?? {}), [descriptionAnnotation]: description } },
        data,
      };
      delete (next as { binaryData?: unknown }).binaryData;
      await storage.update!(next as KubeObject, {}).catch(tolerate);
    });
    const enqueueNamespace = (ns: NamespaceObject) => this.queue.add(ns.metadata?.name ?? '');
    namespaces.on({ onAdd: enqueueNamespace, onUpdate: (_o, ns) => enqueueNamespace(ns) });
    const enqueueOwn = (cm: KubeObject) => {
      if (cm.metadata?.name === rootCAConfigMapName) this.queue.add(cm.metadata.namespace ?? '');
    };
    configMaps.on({ onUpdate: (_o, cm) => enqueueOwn(cm), onDelete: enqueueOwn });
  }
}
