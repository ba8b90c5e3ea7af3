// The pod sandbox's CRI config, as kuberuntime generatePodSandboxConfig builds it: metadata, the
// hostname, the /var/log/pods-style log directory, labels, annotations and port mappings.

import type { Pod } from '../api/types.js';
import type { PodSandboxConfig, PortMapping } from '../runtime/cri.js';
import { podLogDir } from '../runtime/root-dir.js';
import { LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID, podHostname } from './container-config.js';

export function podSandboxConfig(pod: Pod, rootDir: string, attempt = 0): PodSandboxConfig {
  const m = pod.metadata ?? {};
  const name = m.name ?? '';
  const namespace = m.namespace || 'default';
  const uid = m.uid ?? '';
  const portMappings: PortMapping[] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      portMappings.push({
        protocol: (p.protocol ?? 'TCP') as PortMapping['protocol'],
        containerPort: p.containerPort,
        hostPort: p.hostPort ?? 0,
        hostIp: p.hostIP ?? '',
      });
    }
  }
  return {
    metadata: { name, namespace, uid, attempt },
    hostname: podHostname(pod),
    logDirectory: podLogDir(rootDir, namespace, name, uid),
    labels: { ...(m.labels ?? {}), [LABEL_POD_NAME]: name, [LABEL_POD_NAMESPACE]: namespace, [LABEL_POD_UID]: uid },
    annotations: { ...(m.annotations ?? {}) },
    portMappings,
  };
}
