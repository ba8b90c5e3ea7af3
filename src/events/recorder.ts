// The event recorder contract: components report (object, type, reason, message) and the recorder
// turns them into v1 Events, aggregating repeats as the kubelet's recorder does.

export type EventType = 'Normal' | 'Warning';

/** What an event is about: a pod, optionally one of its containers (`spec.containers{name}`), the node, or a workload. */
export interface EventObject {
  namespace: string;
  name: string;
  uid: string;
  /** e.g. `spec.containers{web}` or `spec.initContainers{migrate}`; empty for the pod itself. */
  fieldPath?: string;
  /** `Pod` when unset; `Node` for what concerns the node itself (e.g. a static-pod manifest); a workload's kind from a controller. */
  kind?: string;
  /** `v1` when unset; the workload's group version (`apps/v1`, `batch/v1`) from a controller. */
  apiVersion?: string;
  /** The object's resourceVersion when the event was made (controllers' references carry it). */
  resourceVersion?: string;
}

export interface EventRecorder {
  event(obj: EventObject, type: EventType, reason: string, message: string): void;
}

/** Recorders for other components over the same events (client-go: one recorder per source component). */
export interface EventRecorderFactory {
  /** A recorder whose events carry `component` as source and reporting component, with no host. */
  recorderFor(component: string): EventRecorder;
}
