// The pod worker's hooks for containers run as host processes: no image, no mounts; each container
// instance gets its own termination-message file under its pod's sandbox directory, named to it in
// PODVISOR_TERMINATION_MESSAGE_PATH, and read back (or the log's tail) once it exited.

import type { Pod } from '../api/types.js';
import type { ContainerStatus } from '../runtime/cri.js';
import { createFileUnder, modes, openReadUnder } from '../runtime/root-dir.js';
import { LABEL_POD_UID } from './container-config.js';
import type { PodRuntimeSupport } from './runtime-support.js';
import { readTerminationMessage, terminationMessageHostPath, withTerminationMessages } from './termination-message.js';

/** The variable that tells a host process where its termination message goes. */
export const TERMINATION_MESSAGE_PATH_ENV = 'PODVISOR_TERMINATION_MESSAGE_PATH';

/** Owner-only, as everything else in a sandbox directory. */
const MESSAGE_FILE_MODE = 0o600;

export function newProcessPodSupport(deps: { rootDir: string }): PodRuntimeSupport {
  const messages = new Map<string, Map<string, string>>();
  const uidOf = (pod: Pod) => pod.metadata?.uid ?? '';
  const pathOf = (uid: string, s: Pick<ContainerStatus, 'metadata'>) => terminationMessageHostPath(deps.rootDir, uid, s.metadata.name, s.metadata.attempt);

  return {
    async prepareSandbox(_pod, config) {
      return config;
    },

    async ensureImage(_pod, container) {
      return { ok: true, imageRef: container.image ?? '' };
    },

    async containerConfig(pod, _container, config) {
      // A fresh, empty file per instance, as the kubelet mounts one per container start.
      const path = pathOf(uidOf(pod), config);
      await createFileUnder(deps.rootDir, path, modes.private, MESSAGE_FILE_MODE);
      const envs = config.envs.filter((e) => e.key !== TERMINATION_MESSAGE_PATH_ENV);
      envs.push({ key: TERMINATION_MESSAGE_PATH_ENV, value: path });
      return { ...config, envs };
    },

    async containerStatuses(pod, statuses) {
      const uid = uidOf(pod);
      let cache = messages.get(uid);
      if (!cache) messages.set(uid, (cache = new Map()));
      const count = (pod.spec?.containers.length ?? 0) + (pod.spec?.initContainers?.length ?? 0);
      return withTerminationMessages(statuses, count, cache, (s) =>
        readTerminationMessage(pathOf(s.labels[LABEL_POD_UID] || uid, s), s, (p) => openReadUnder(deps.rootDir, p)),
      );
    },

    async releasePod(pod) {
      messages.delete(uidOf(pod));
    },
  };
}
