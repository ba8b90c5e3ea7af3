// What the pod worker does beside the container calls, as the kubelet's kuberuntime manager does it:
// volumes and DNS before the sandbox, the image before each container, mounts, resources and security
// context in its config, the managed /etc/hosts, projected volumes refreshed on each sync, termination messages in its status (a mounted file, or one named in the
// environment where the runtime has no mounts), and volumes released once the pod stopped.

import { readFile } from 'node:fs/promises';
import type { Container, Pod } from '../api/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { ContainerConfig, ContainerStatus, HandlerRuntime, Image, ImageService, ImageSpec, Mount, PodSandboxConfig } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Backoff } from './backoff.js';
import { LABEL_POD_UID } from './container-config.js';
import type { NodeAllocatable, ObjectLookup } from './envvars.js';
import { formatPod, podRef } from './format.js';
import { readHostMessage, withHostMessageFile } from './host-message-file.js';
import { nodeDockerConfigPaths, nodeDockerConfigs } from './node-keyring.js';
import { ensureImageExists, ImageNotUsedReason, imageNotUsedMessage, newImageBackoff, unusedImage, type EnsureImageResult } from './images.js';
import type { ClusterDNSSettings } from './cluster-dns.js';
import { containerSecurityContext, linuxContainerResources, linuxSandboxConfig, podDNSConfig, verifyRunAsNonRoot } from './linux-config.js';
import { createTerminationMessageFile, readTerminationMessage, terminationMessageHostPath, withTerminationMessages } from './termination-message.js';
import { etcHostsMount } from './etc-hosts.js';
import { containerMounts, refreshProjectedVolumes, setUpVolumes, tearDownVolumes, VolumeError, type HostVolume } from './volumes.js';

/** What a container is started from: its image (and the image's status when just known) and the pod's IP. */
export interface ContainerTarget {
  imageRef: string;
  image?: Image;
  podIP: string;
}

/** The pod worker's hooks around the container calls. */
export interface PodRuntimeSupport {
  /** Sets the pod's volumes up and completes the sandbox config (DNS, namespaces, sysctls). */
  prepareSandbox(pod: Pod, config: PodSandboxConfig): Promise<PodSandboxConfig>;
  /** EnsureImageExists for the container's image. */
  ensureImage(pod: Pod, container: Container, sandboxConfig: PodSandboxConfig): Promise<EnsureImageResult>;
  /**
   * Mounts, resources and security context; throws ContainerConfigError for a config that cannot be.
   * `image` is the image's status when ensureImage just had it (otherwise it is asked for).
   */
  containerConfig(pod: Pod, container: Container, config: ContainerConfig, target: ContainerTarget): Promise<ContainerConfig>;
  /**
   * On each sync of a pod whose sandbox runs: its configMap, secret, downwardAPI and projected
   * volumes projected again (the objects and metadata as they are now); FailedMount when one cannot be.
   */
  refreshVolumes(pod: Pod): Promise<void>;
  /** Statuses with the termination messages of exited containers filled in. */
  containerStatuses(pod: Pod, statuses: ContainerStatus[]): Promise<ContainerStatus[]>;
  /** Once the pod is stopped for good and its final status published: its volumes released. */
  releasePod(pod: Pod): Promise<void>;
}

export interface RuntimeSupportDeps {
  images: ImageService;
  /** The runtime a pod runs on (by its RuntimeClass handler): its name (`process`), for what its events say, and its capabilities. */
  runtimeOf: (pod: Pod) => HandlerRuntime;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  rootDir: string;
  lookup: ObjectLookup;
  hostIP: string;
  nodeAllocatable: NodeAllocatable;
  /** The resolv.conf pods get their DNS from (the kubelet's --resolv-conf); /etc/resolv.conf when unset. */
  resolvConf?: string;
  /** The cluster DNS pods with their own network reach, while it is served (none: MissingClusterDNS). */
  clusterDNS?: () => ClusterDNSSettings | undefined;
  /** The image pull back-off (10 s doubling to 300 s when unset). */
  imageBackoff?: Backoff;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * The image service with ImageStatus coalesced: pods asking for the same image while an answer is on
 * its way share it (one round-trip for N pods starting at once); nothing is kept once it arrives.
 */
export function coalescingImageService(images: ImageService): ImageService {
  const inFlight = new Map<string, Promise<Image | null>>();
  return {
    listImages: (filter) => images.listImages(filter),
    pullImage: (image, auth, sandboxConfig) => images.pullImage(image, auth, sandboxConfig),
    removeImage: (image) => images.removeImage(image),
    imageStatus(image: ImageSpec) {
      const key = JSON.stringify(image);
      let p = inFlight.get(key);
      if (!p) {
        p = images.imageStatus(image).finally(() => inFlight.delete(key));
        inFlight.set(key, p);
      }
      return p;
    },
  };
}

export function newPodRuntimeSupport(deps: RuntimeSupportDeps): PodRuntimeSupport {
  const images = coalescingImageService(deps.images);
  const imageBackoff = deps.imageBackoff ?? newImageBackoff(deps.clock);
  const volumes = new Map<string, Map<string, HostVolume>>();
  const messages = new Map<string, Map<string, string>>();
  const uidOf = (pod: Pod) => pod.metadata?.uid ?? '';
  const volumeDeps = {
    rootDir: deps.rootDir,
    lookup: deps.lookup,
    hostIP: deps.hostIP,
    nodeAllocatable: deps.nodeAllocatable,
    now: () => new Date(deps.clock.now()),
  };
  /** Per pod, the digest of each projected volume's last payload. */
  const projected = new Map<string, Map<string, string>>();
  /** Pods told that their images are not used (a runtime without images). */
  const imagesNoted = new Set<string>();

  const podVolumes = async (pod: Pod): Promise<Map<string, HostVolume>> => {
    let v = volumes.get(uidOf(pod));
    if (!v) {
      v = await setUpVolumes(volumeDeps, pod);
      volumes.set(uidOf(pod), v);
    }
    return v;
  };

  let clusterDNSNoted = false;
  return {
    async prepareSandbox(pod, config) {
      try {
        await podVolumes(pod);
      } catch (e) {
        if (e instanceof VolumeError) deps.recorder.event(podRef(pod), 'Warning', 'FailedMount', e.message);
        throw e;
      }
      const resolv = await readFile(deps.resolvConf ?? '/etc/resolv.conf', 'utf8').catch(() => '');
      const dns = podDNSConfig(pod, resolv, deps.clusterDNS?.());
      // Where every pod shares the host's network there is no cluster DNS to miss: said once per agent.
      const sayOnce = deps.runtimeOf(pod).capabilities.network === 'host';
      if (dns.missingClusterDNS && !(sayOnce && clusterDNSNoted)) {
        clusterDNSNoted = true;
        deps.recorder.event(
          podRef(pod),
          'Warning',
          'MissingClusterDNS',
          `pod: "${formatPod(pod)}". kubelet does not have ClusterDNS IP configured and cannot create Pod using "${pod.spec?.dnsPolicy ?? 'ClusterFirst'}" policy. Falling back to "Default" policy.`,
        );
      }
      return linuxSandboxConfig(pod, config, dns.config);
    },

    ensureImage(pod, container, sandboxConfig) {
      const rt = deps.runtimeOf(pod);
      if (!rt.capabilities.images) {
        const message = imagesNoted.has(uidOf(pod)) ? undefined : imageNotUsedMessage(pod, rt.name);
        imagesNoted.add(uidOf(pod));
        if (message) deps.recorder.event(podRef(pod), 'Normal', ImageNotUsedReason, message);
        return unusedImage(images, container);
      }
      return ensureImageExists(
        {
          images,
          clock: deps.clock,
          recorder: deps.recorder,
          backoff: imageBackoff,
          secret: (ns, n) => deps.lookup.secret(ns, n),
          nodeCredentials: () => nodeDockerConfigs(nodeDockerConfigPaths(deps.rootDir)),
        },
        pod,
        container,
        sandboxConfig,
      );
    },

    async refreshVolumes(pod) {
      const uid = uidOf(pod);
      if (!volumes.has(uid)) return;
      let written = projected.get(uid);
      if (!written) projected.set(uid, (written = new Map()));
      try {
        await refreshProjectedVolumes(volumeDeps, pod, written);
      } catch (e) {
        if (e instanceof VolumeError) deps.recorder.event(podRef(pod), 'Warning', 'FailedMount', e.message);
        else deps.logger.warn('Failed to refresh volumes', { pod: formatPod(pod), err: messageOf(e) });
      }
    },

    async containerConfig(pod, container, config, { imageRef, image: known, podIP }) {
      const image = known ?? (await images.imageStatus({ image: imageRef }).catch(() => null));
      verifyRunAsNonRoot(pod, container, image);
      const env = new Map(config.envs.map((e) => [e.key, e.value]));
      const mounts: Mount[] = await containerMounts(container, await podVolumes(pod), env);
      // A host process keeps the host's /etc/hosts and its termination message file on the host:
      // its volumes alone are mounted (the process runtime's mount namespace).
      const caps = deps.runtimeOf(pod).capabilities;
      const withMounts = caps.mounts && !caps.hostProcesses;
      if (withMounts) {
        const hosts = await etcHostsMount(deps.rootDir, pod, container, podIP);
        if (hosts) mounts.push(hosts);
      }
      const tmp = container.terminationMessagePath;
      if (!withMounts) config = await withHostMessageFile(deps.rootDir, uidOf(pod), config);
      else if (tmp && !mounts.some((m) => m.containerPath === tmp)) {
        const hostPath = await createTerminationMessageFile(deps.rootDir, uidOf(pod), container.name, config.metadata.attempt);
        mounts.push({ containerPath: tmp, hostPath, readonly: false });
      }
      // The runtime sets HOSTNAME itself from the sandbox (the node's name on the host's network).
      const ownHostname = (container.env ?? []).some((e) => e.name === 'HOSTNAME');
      return {
        ...config,
        image: imageRef,
        workingDir: container.workingDir ?? '',
        envs: ownHostname ? config.envs : config.envs.filter((e) => e.key !== 'HOSTNAME'),
        mounts,
        linux: {
          resources: linuxContainerResources(pod, container, deps.nodeAllocatable.memoryBytes),
          securityContext: containerSecurityContext(pod, container),
        },
      };
    },

    async containerStatuses(pod, statuses) {
      const uid = uidOf(pod);
      let cache = messages.get(uid);
      if (!cache) messages.set(uid, (cache = new Map()));
      const count = (pod.spec?.containers.length ?? 0) + (pod.spec?.initContainers?.length ?? 0);
      // A host process keeps the host's /etc/hosts and its termination message file on the host:
      // its volumes alone are mounted (the process runtime's mount namespace).
      const caps = deps.runtimeOf(pod).capabilities;
      const withMounts = caps.mounts && !caps.hostProcesses;
      return withTerminationMessages(statuses, count, cache, (s) =>
        !withMounts
          ? readHostMessage(deps.rootDir, uid, s)
          : readTerminationMessage(terminationMessageHostPath(deps.rootDir, s.labels[LABEL_POD_UID] || uid, s.metadata.name, s.metadata.attempt), s),
      );
    },

    async releasePod(pod) {
      const uid = uidOf(pod);
      volumes.delete(uid);
      projected.delete(uid);
      messages.delete(uid);
      imagesNoted.delete(uid);
      await tearDownVolumes(deps.rootDir, uid).catch((e) => {
        deps.logger.warn('Failed to tear down volumes', { pod: formatPod(pod), err: messageOf(e) });
      });
    },
  };
}
