// The process runtime's own pod rules (no images, no mounts), for what validates before connecting.

import { runtimePodRules } from '../pod-rules.js';
import { PROCESS_RUNTIME_CAPABILITIES } from './profile.js';

/** Errors for a pod the process runtime cannot run as written (regular and init containers). */
export const validateForProcessRuntime = runtimePodRules(PROCESS_RUNTIME_CAPABILITIES);
