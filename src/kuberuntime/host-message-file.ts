// Termination messages of containers on a runtime without mounts (host processes): each container
// instance gets its own file under its pod's sandbox directory, named to it in
// PODVISOR_TERMINATION_MESSAGE_PATH, read back (or the log's tail) once it exited.

import type { ContainerConfig, ContainerStatus } from '../runtime/cri.js';
import { createFileUnderSync, modes, openReadUnder } from '../runtime/root-dir.js';
import { LABEL_POD_UID } from './container-config.js';
import { readTerminationMessage, terminationMessageHostPath } from './termination-message.js';

/** The variable that tells a host process where its termination message goes. */
export const TERMINATION_MESSAGE_PATH_ENV = 'PODVISOR_TERMINATION_MESSAGE_PATH';

/** Owner-only, as everything else in a sandbox directory. */
const MESSAGE_FILE_MODE = 0o600;

/** Creates the container instance's fresh, empty message file and names it in the config's environment. */
export async function withHostMessageFile(rootDir: string, podUid: string, config: ContainerConfig): Promise<ContainerConfig> {
  const path = terminationMessageHostPath(rootDir, podUid, config.metadata.name, config.metadata.attempt);
  // Synchronous: on every container start, and cheaper than a dozen thread-pool round trips.
  createFileUnderSync(rootDir, path, modes.private, MESSAGE_FILE_MODE);
  const envs = config.envs.filter((e) => e.key !== TERMINATION_MESSAGE_PATH_ENV);
  envs.push({ key: TERMINATION_MESSAGE_PATH_ENV, value: path });
  return { ...config, envs };
}

/** The exited instance's message: its file (opened refusing symlinks, FIFOs, devices), else the log's tail. */
export function readHostMessage(rootDir: string, podUid: string, s: ContainerStatus): Promise<string> {
  const path = terminationMessageHostPath(rootDir, s.labels[LABEL_POD_UID] || podUid, s.metadata.name, s.metadata.attempt);
  return readTerminationMessage(path, s, (p) => openReadUnder(rootDir, p));
}
