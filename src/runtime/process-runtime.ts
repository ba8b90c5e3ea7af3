// The process runtime as code outside src/runtime/ may know it: the one face of runtime/process/.
// Everything else of that runtime is reached through the CRI (runtime/cri/), as a kubelet reaches its runtime.

export { validateForProcessRuntime } from './process/validation.js';
export { detectRuntimeHost, unhonouredFields, unhonouredWarnings, type RuntimeHost, type Unhonoured } from './process/capabilities.js';
export { processState } from './process/adopt.js';
export { defaultRuntimeEndpoint, lockHolder, runtimeStateDir } from './process/state.js';
export { DEFAULT_CNI_BIN_DIR, podNetworkConfig, podNetworkHostProblems, type PodNetworkConfig } from './process/pod-netns.js';
export { rootDirSocketProblem, UNIX_SOCKET_PATH_MAX } from './process/socket-paths.js';
export { findPerl } from './process/spawner.js';

/** The runtime service (`podvisor runtime serve`), loaded only by the command that serves it. */
export const loadProcessRuntimeService = (): Promise<typeof import('./process/service.js')> => import('./process/service.js');

/** The runtime itself in this process, for the benchmark's in-process hosts. */
export const loadProcessRuntime = (): Promise<typeof import('./process/runtime.js')> => import('./process/runtime.js');
