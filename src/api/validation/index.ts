// The API server's validation rules for the objects podvisor reads, in one import.

export { validatePod, validatePods, validatePodSpec, validateObjectMeta, validateLabels, validateAnnotations } from './pod.js';
export { validateConfigMap, validateSecret, base64ErrorOffset } from './objects.js';
export { validateContainerCommon, validateContainers, validateInitContainers, validateEnv, validateEnvFrom } from './container.js';
export { validateHandler, validateProbe, validateLifecycle, validatePortNumOrName } from './probes.js';
export { validateResourceRequirements } from './resources.js';
export * as names from './names.js';
