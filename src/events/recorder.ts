// The event recorder contract: components report (object, type, reason, message) and the recorder
// turns them into v1 Events, aggregating repeats as the kubelet's recorder does.

export type EventType = 'Normal' | 'Warning';

/** What an event is about: a pod, optionally one of its containers (`spec.containers{name}`). */
export interface EventObject {
  namespace: string;
  name: string;
  uid: string;
  /** e.g. `spec.containers{web}` or `spec.initContainers{migrate}`; empty for the pod itself. */
  fieldPath?: string;
  /** `Pod` when unset; `Node` for what concerns the node itself (e.g. a static-pod manifest). */
  kind?: 'Pod' | 'Node';
}

export interface EventRecorder {
  event(obj: EventObject, type: EventType, reason: string, message: string): void;
}
