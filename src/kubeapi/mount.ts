// The Kubernetes API mounted on a server's route table, loaded on its first request: an agent driven
// only through the kubelet's routes never loads the API's tables, YAML and watches.

import type { Router } from '../http/router.js';
import type { KubeBackend } from './backend.js';
import type { KubeApiOptions } from './handler.js';
import { registerKubeApiRoutes, type KubeApi } from './routes.js';

/** Mounts the Kubernetes API over a backend, loaded on its first request: an agent driven only through the kubelet routes never loads it. */
export function mountKubeApi(router: Router, backend: KubeBackend, opts: KubeApiOptions = {}): void {
  let api: Promise<KubeApi> | undefined;
  registerKubeApiRoutes(router, () => (api ??= import('./handler.js').then((m) => m.createKubeApi(backend, opts))));
}
