// The system PriorityClasses (system-node-critical, system-cluster-critical) stored at start when not
// stored yet, as kube-apiserver's scheduling post-start hook (AddSystemPriorityClasses) makes them.

import { systemPriorityClasses } from '../api/validation/scheduling.js';
import type { ObjectStore } from './object-store.js';

export async function createSystemPriorityClasses(store: ObjectStore): Promise<void> {
  const storage = store.storage('PriorityClass');
  if (!storage?.create) return;
  for (const pc of systemPriorityClasses) {
    if (storage.get('', pc.metadata!.name!)) continue;
    await storage.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', ...structuredClone(pc) }, {});
  }
}
