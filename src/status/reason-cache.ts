// An entry of the kubelet's reason cache (reason_cache.go): why a container's last start failed, kept
// by the pod worker and shown by convertToAPIContainerStatuses as the waiting reason of its status.

/** The last failed start of a container. */
export interface StartFailure {
  /** e.g. `CrashLoopBackOff`, `PostStartHookError`, `RunContainerError`, `CreateContainerConfigError`. */
  reason: string;
  message: string;
}
