// The controllers' Events as kube-controller-manager records them: the workload as involvedObject,
// each controller its own source component (deployment-controller, replicaset-controller...), and
// the pod writes that report themselves (controller_utils.go's RealPodControl: SuccessfulCreate
// "Created pod: NAME", FailedCreate "Error creating: ERR", SuccessfulDelete "Deleted pod: NAME").

import type { Pod } from '../api/types.js';
import type { EventObject, EventRecorder } from '../events/recorder.js';
import type { KubeBackend, KubeObject } from '../kubeapi/backend.js';

/** The reference an event about a workload carries (ref.GetReference: its kind, group version, name, uid, resourceVersion). */
export function workloadRef(o: KubeObject, apiVersion: string, kind: string): EventObject {
  return {
    kind,
    apiVersion,
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    uid: o.metadata?.uid ?? '',
    resourceVersion: o.metadata?.resourceVersion,
  };
}

/** What an API error prints as in a Go `%v`: the Status message. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const code = (err: unknown) => (err as { code?: number }).code;

/** The words of the pod events; StatefulSets say it their own way (recordPodEvent). */
export interface PodEventWording {
  created(pod: string): string;
  createFailed(pod: string, err: string): string;
  deleted(pod: string): string;
  deleteFailed(pod: string, err: string): string;
}

export const podControlWording: PodEventWording = {
  created: (pod) => `Created pod: ${pod}`,
  createFailed: (_pod, err) => `Error creating: ${err}`,
  deleted: (pod) => `Deleted pod: ${pod}`,
  deleteFailed: (_pod, err) => `Error deleting: ${err}`,
};

/** Pod creation and deletion on behalf of a workload, each recorded as an event on it. Errors are rethrown. */
export class PodControl {
  constructor(
    private readonly backend: KubeBackend,
    private readonly recorder: EventRecorder,
    private readonly wording: PodEventWording = podControlWording,
  ) {}

  async create(owner: EventObject, pod: Pod): Promise<Pod> {
    const name = pod.metadata?.name ?? '';
    try {
      const made = await this.backend.createPod(pod);
      this.recorder.event(owner, 'Normal', 'SuccessfulCreate', this.wording.created(name));
      return made;
    } catch (err) {
      // A pod that already exists is the controller's stale view, not a failure worth an event.
      if (code(err) !== 409) this.recorder.event(owner, 'Warning', 'FailedCreate', this.wording.createFailed(name, errorText(err)));
      throw err;
    }
  }

  async delete(owner: EventObject, namespace: string, name: string): Promise<void> {
    try {
      await this.backend.deletePod(namespace, name, {});
    } catch (err) {
      if (code(err) !== 404) this.recorder.event(owner, 'Warning', 'FailedDelete', this.wording.deleteFailed(name, errorText(err)));
      throw err;
    }
    this.recorder.event(owner, 'Normal', 'SuccessfulDelete', this.wording.deleted(name));
  }
}
