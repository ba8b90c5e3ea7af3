// The flags of every command that runs pods (run, up, agent, images), read into the agent's settings
// (src/agent/settings.ts) with pflag's usage errors; and the hidden flags of test-only knobs.

import {
  agentSettingsOf,
  DEFAULT_CONTAINER_RUNTIME_ENDPOINT,
  InvalidSettingError,
  maxRestartPeriodSetting,
  nodeAllocatableSetting,
  type AgentSettings,
} from '../agent/settings.js';
import type { NodeAllocatable } from '../kubelet/admission.js';
import { UsageError, type CommandIO, type FlagSpec, type ParsedArgs } from './args.js';

export { durationFlag, parseGoDuration } from './duration.js';

/** Flags of every command that runs pods. */
export const agentFlagSpecs: FlagSpec[] = [
  {
    name: 'runtime',
    type: 'string',
    default: 'process',
    valueName: 'NAME',
    usage:
      'Container runtime: process (each container a host process group), containerd (images, volumes, pod networking through its CRI), or process,containerd (both: pods of RuntimeClass process run as host processes, every other pod on containerd).',
  },
  {
    name: 'cni-conf-dir',
    type: 'string',
    valueName: 'DIR',
    usage:
      "With --runtime=containerd: write podvisor's pod network (a bridge with host-local addresses and portmap) into this CNI configuration directory, the runtime's.",
  },
  {
    name: 'pod-network',
    type: 'string',
    valueName: 'MODE',
    usage:
      "With --runtime=process: host (default), pods share the host's network; cni, each pod gets a network namespace and IP on the CNI bridge containerd's pods use (needs root and the CNI plugins in /usr/lib/cni).",
  },
  {
    name: 'pod-cidr',
    type: 'string',
    valueName: 'CIDR',
    usage: 'The pod network range with --cni-conf-dir or --pod-network=cni (default: a /24 of 10.85.0.0/16 picked by the root dir).',
  },
  {
    name: 'root-dir',
    type: 'string',
    valueName: 'DIR',
    usage: 'Directory for pod sandboxes and logs (default /var/lib/podvisor as root, else $XDG_STATE_HOME/podvisor).',
  },
  { name: 'node-cpu', type: 'string', valueName: 'QUANTITY', usage: "CPU allocatable to pods, e.g. 2 or 1500m (default: the host's CPUs)." },
  { name: 'node-memory', type: 'string', valueName: 'QUANTITY', usage: "Memory allocatable to pods, e.g. 4Gi (default: the host's memory)." },
  {
    name: 'max-container-restart-period',
    type: 'string',
    valueName: 'DURATION',
    usage: "Cap of the CrashLoopBackOff delay, as the kubelet's crashLoopBackOff.maxContainerRestartPeriod (default 5m0s).",
  },
  { name: 'max-pods', type: 'string', valueName: 'N', usage: "Number of pods the node admits, as the kubelet's --max-pods (default 110)." },
  {
    name: 'eviction-hard',
    type: 'string',
    valueName: 'SIGNAL<VALUE,...',
    usage:
      "The hard eviction thresholds, as the kubelet's --eviction-hard: memory.available (MemoryPressure), nodefs.available and nodefs.inodesFree of the root dir (DiskPressure), pid.available (PIDPressure), each a quantity or a percentage (default memory.available<100Mi, nodefs.available<10% but at most 1Gi, nodefs.inodesFree<5%; pid.available none).",
  },
  {
    name: 'eviction-pressure-transition-period',
    type: 'string',
    valueName: 'DURATION',
    usage: "How long DiskPressure stays on after the root dir's file system recovers, as the kubelet's flag (default 5m).",
  },
  {
    name: 'pod-max-pids',
    type: 'string',
    valueName: 'N',
    usage: "Processes each pod may run, as the kubelet's podPidsLimit (-1 or unset: unlimited; needs root and cgroups).",
  },
  {
    name: 'service-cluster-ip-range',
    type: 'string',
    valueName: 'CIDR',
    usage:
      "Services' ClusterIPs are allocated from this IPv4 range, and the cluster DNS listens on its tenth address (default: the root dir's own, recorded in <root-dir>/service-network.json: the first /16 from 127.99.0.0/16 up that no other root dir of the host has, on the loopback, where the service proxy listens without root).",
  },
  {
    name: 'nodeport-addresses',
    type: 'string',
    valueName: 'IPS',
    usage: 'Comma-separated IPv4 addresses NodePort Services listen on (default 127.0.0.1; 0.0.0.0 for every interface).',
  },
  {
    name: 'proxy-mode',
    type: 'string',
    valueName: 'MODE',
    usage:
      "The service proxy: userspace (default; every connection through the agent) or iptables (as root: the kernel DNATs connections from the host and from pods to ClusterIPs, as kube-proxy's iptables mode).",
  },
  {
    name: 'ingress-http-port',
    type: 'string',
    valueName: 'PORT',
    usage:
      'The port the ingress proxy serves HTTP on, at 127.0.0.1 (0: a free port; default 80 as root, falling back to a free port when 80 is taken, else a free port). The chosen port is in `podvisor agent status` and in the URLs up and run print.',
  },
  {
    name: 'ingress-https-port',
    type: 'string',
    valueName: 'PORT',
    usage:
      'The port the ingress proxy serves HTTPS on, at 127.0.0.1 (0: a free port; default 443 as root, falling back to a free port when 443 is taken, else a free port).',
  },
  {
    name: 'container-runtime-endpoint',
    type: 'string',
    valueName: 'ENDPOINT',
    usage: `CRI endpoint of the runtime service, unix:///path (default unix://<root-dir>/runtime.sock, where the process runtime service is started when nothing answers; with --runtime=containerd, unix://<root-dir>/containerd/containerd.sock, where podvisor starts containerd from the host's binaries; a host's own containerd is usually at ${DEFAULT_CONTAINER_RUNTIME_ENDPOINT}).`,
  },
  {
    name: 'pod-infra-container-image',
    type: 'string',
    valueName: 'IMAGE',
    usage:
      "With the containerd podvisor starts: the sandbox (pause) image of every pod (default: podvisor's own, localhost/podvisor/pause:1, made and loaded without a network; e.g. registry.k8s.io/pause:3.9 for the upstream one).",
  },
  {
    name: 'registry-config',
    type: 'string',
    valueName: 'DIR',
    usage:
      "With the containerd podvisor starts: containerd's registry hosts directory (<DIR>/<host>/hosts.toml: mirrors, plain-HTTP and self-signed registries).",
  },
];

/** What a settings reader returns, its InvalidSettingError a UsageError (exit 2, with `--help` named). */
function asUsage<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof InvalidSettingError) throw new UsageError(err.message);
    throw err;
  }
}

/** Everything the agent flags decide, checked; throws UsageError for a bad value. */
export function agentSettings(parsed: ParsedArgs, io: Pick<CommandIO, 'env' | 'cwd'>): AgentSettings {
  return asUsage(() => agentSettingsOf(parsed.flags, io));
}

/** Node allocatable: the host's CPUs (×1000 m) and memory, unless --node-cpu / --node-memory say otherwise. */
export function nodeAllocatable(parsed: ParsedArgs): NodeAllocatable {
  return asUsage(() => nodeAllocatableSetting(parsed.flags));
}

/** The crashLoopBackOff cap in seconds from --max-container-restart-period (1s..300s, as the kubelet checks). */
export function maxRestartPeriodSeconds(parsed: ParsedArgs): number | undefined {
  return asUsage(() => maxRestartPeriodSetting(parsed.flags));
}

/**
 * Takes a hidden `--NAME=VALUE` / `--NAME VALUE` flag out of argv before the visible flags are parsed,
 * so test-only knobs stay out of `--help`.
 */
export function takeHiddenFlag(argv: readonly string[], name: string): { argv: string[]; value?: string } {
  const out: string[] = [];
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (a.startsWith(`--${name}=`)) value = a.slice(name.length + 3);
    else if (a === `--${name}` && i + 1 < argv.length) value = argv[++i];
    else out.push(a);
  }
  return value === undefined ? { argv: out } : { argv: out, value };
}
