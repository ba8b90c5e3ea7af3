// The pod's /etc/hosts, managed as the kubelet's makeHostsMount / ensureHostsFile do
// (pkg/kubelet/kubelet_pods.go): localhost entries, the pod's IP with its hostname (and FQDN with a
// subdomain), then the pod's hostAliases; on the host's network, the node's /etc/hosts followed by
// the hostAliases. Written to `<sandbox dir>/etc-hosts` and mounted at /etc/hosts of every container
// that does not mount something there itself, once the pod has an IP.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import type { Mount } from '../runtime/cri.js';
import { sandboxDir } from '../runtime/root-dir.js';
import { podHostname } from './container-config.js';

export const ETC_HOSTS_PATH = '/etc/hosts';
const MANAGED_HEADER = '# Kubernetes-managed hosts file.\n';
const MANAGED_HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';
/** The domain a pod's subdomain lives in (`<subdomain>.<namespace>.svc.<domain>`). */
const CLUSTER_DOMAIN = 'cluster.local';

type HostAlias = NonNullable<NonNullable<Pod['spec']>['hostAliases']>[number];

function hostAliasEntries(aliases: HostAlias[] | undefined): string {
  if (!aliases?.length) return '';
  return `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`).join('')}`;
}

/** managedHostsFileContent: the file of a pod with a network of its own. */
export function managedHostsContent(pod: Pod, podIP: string): string {
  const hostname = podHostname(pod);
  const subdomain = pod.spec?.subdomain;
  const domain = subdomain ? `${subdomain}.${pod.metadata?.namespace || 'default'}.svc.${CLUSTER_DOMAIN}` : '';
  return [
    MANAGED_HEADER,
    '127.0.0.1\tlocalhost\n',
    '::1\tlocalhost ip6-localhost ip6-loopback\n',
    'fe00::0\tip6-localnet\n',
    'fe00::0\tip6-mcastprefix\n',
    'fe00::1\tip6-allnodes\n',
    'fe00::2\tip6-allrouters\n',
    domain ? `${podIP}\t${hostname}.${domain}\t${hostname}\n` : `${podIP}\t${hostname}\n`,
    hostAliasEntries(pod.spec?.hostAliases),
  ].join('');
}

/** nodeHostsFileContent: the node's hosts file and the pod's aliases, for a pod on the host's network. */
export function hostNetworkHostsContent(pod: Pod, nodeHosts: string): string {
  return `${MANAGED_HEADER_HOST_NETWORK}${nodeHosts}${hostAliasEntries(pod.spec?.hostAliases)}`;
}

/**
 * The /etc/hosts mount of a container (written first), or undefined where the kubelet mounts none:
 * no pod IP yet, or the container mounts a volume at /etc/hosts.
 */
export async function etcHostsMount(
  rootDir: string,
  pod: Pod,
  container: Container,
  podIP: string,
  nodeHostsFile = ETC_HOSTS_PATH,
): Promise<Mount | undefined> {
  if (!podIP || (container.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS_PATH)) return undefined;
  const content = pod.spec?.hostNetwork ? hostNetworkHostsContent(pod, await readFile(nodeHostsFile, 'utf8').catch(() => '')) : managedHostsContent(pod, podIP);
  const dir = sandboxDir(rootDir, pod.metadata?.uid ?? '');
  await mkdir(dir, { recursive: true });
  const hostPath = join(dir, 'etc-hosts');
  await writeFile(hostPath, content, { mode: 0o644 });
  return { containerPath: ETC_HOSTS_PATH, hostPath, readonly: false };
}
