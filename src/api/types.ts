// The v1 object types podvisor works with: Kubernetes' own definitions (kubernetes-types), plus the
// few fields newer than that package (lifecycle.stopSignal) so the code can name them type-safely.

import type * as k8s from 'kubernetes-types/core/v1.js';
import type { ObjectMeta, Time } from 'kubernetes-types/meta/v1.js';

export type {
  ConfigMap,
  Secret,
  PodSpec,
  PodStatus,
  PodCondition,
  ContainerStatus,
  ContainerState,
  ContainerPort,
  Probe,
  ExecAction,
  HTTPGetAction,
  TCPSocketAction,
  GRPCAction,
  EnvVar,
  EnvFromSource,
  ResourceRequirements,
  Event,
  ObjectReference,
} from 'kubernetes-types/core/v1.js';
export type { ObjectMeta, Time };
export type { LabelSelector, OwnerReference } from 'kubernetes-types/meta/v1.js';
export type {
  PodTemplateSpec,
  Node,
  NodeCondition,
  Taint,
  Toleration,
  NodeSelectorTerm,
  NodeSelectorRequirement,
  PodAffinityTerm,
  TopologySpreadConstraint,
  PersistentVolume,
  PersistentVolumeClaim,
} from 'kubernetes-types/core/v1.js';
export type { StorageClass } from 'kubernetes-types/storage/v1.js';
export type { Deployment, DeploymentCondition, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision } from 'kubernetes-types/apps/v1.js';
export type { Job, JobCondition, CronJob, JobTemplateSpec } from 'kubernetes-types/batch/v1.js';

export interface LifecycleHandler extends k8s.LifecycleHandler {}
export interface Lifecycle extends Omit<k8s.Lifecycle, 'postStart' | 'preStop'> {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
  /** v1.33+: the signal sent to stop the container (e.g. "SIGUSR1"); SIGTERM when unset. */
  stopSignal?: string;
}
export interface Container extends Omit<k8s.Container, 'lifecycle'> {
  lifecycle?: Lifecycle;
}
export interface Pod extends Omit<k8s.Pod, 'spec'> {
  spec?: Omit<k8s.PodSpec, 'containers' | 'initContainers'> & {
    containers: Container[];
    initContainers?: Container[];
  };
}

/** The probe types, spelled as the kubelet spells them in events and metric labels. */
export type ProbeType = 'Liveness' | 'Readiness' | 'Startup';
