// The kubelet's RuntimeClass manager: a pod's runtimeClassName resolved to the runtime handler its
// sandbox is created with (unset: the default handler ''), and the runtime behind that handler (its
// name and capabilities) for what the pod worker decides per pod: images, mounts, the host's network.
// A pod keeps the handler its sandbox was made with. Built-in classes (BUILTIN_RUNTIME_CLASSES) are
// known when the node keeps no RuntimeClass objects (the pods of `run`/`up` without the agent's API).
// Upstream: pkg/kubelet/runtimeclass (Manager.LookupRuntimeHandler).

import type { Pod } from '../api/types.js';
import type { ObjectLookup } from '../kuberuntime/envvars.js';
import type { HandlerRuntime, RuntimeService } from '../runtime/cri.js';
import { BUILTIN_RUNTIME_CLASSES } from '../runtime/pod-rules.js';

/** A RuntimeClass that does not exist, in the API server's NotFound words. */
export class RuntimeClassNotFoundError extends Error {
  constructor(readonly className: string) {
    super(`runtimeclass.node.k8s.io ${JSON.stringify(className)} not found`);
    this.name = 'RuntimeClassNotFoundError';
  }
}

export class RuntimeClassManager {
  /** The handler of each pod (by UID) once resolved: its sandbox keeps it. */
  private readonly handlers = new Map<string, string>();

  constructor(
    private readonly runtime: RuntimeService,
    private readonly lookup: ObjectLookup,
  ) {}

  /** LookupRuntimeHandler: '' without a runtimeClassName; throws RuntimeClassNotFoundError for a class that does not exist. */
  lookupRuntimeHandler(pod: Pod): string {
    const uid = pod.metadata?.uid ?? '';
    const known = this.handlers.get(uid);
    if (known !== undefined) return known;
    const name = pod.spec?.runtimeClassName ?? '';
    let handler = '';
    if (name) {
      const rc = this.lookup.runtimeClass?.(name);
      const h = rc ? rc.handler : BUILTIN_RUNTIME_CLASSES[name];
      if (h === undefined) throw new RuntimeClassNotFoundError(name);
      handler = h;
    }
    this.handlers.set(uid, handler);
    return handler;
  }

  /** The runtime a pod runs on: its handler's, or the runtime's own when it has one handler or the class cannot be resolved. */
  runtimeOf(pod: Pod): HandlerRuntime {
    const own = { name: this.runtime.name, capabilities: this.runtime.capabilities };
    if (!this.runtime.handlerRuntime) return own;
    let handler: string;
    try {
      handler = this.lookupRuntimeHandler(pod);
    } catch {
      return own;
    }
    return this.runtime.handlerRuntime(handler) ?? own;
  }

  /** Once the pod is gone. */
  forget(uid: string): void {
    this.handlers.delete(uid);
  }
}
