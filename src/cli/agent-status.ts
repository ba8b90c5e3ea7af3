// `podvisor agent status`: what the agent of a root dir runs — pid, version, uptime, pods by phase,
// listeners, the service range and DNS address, sources and the manifests that failed to load.

import { defineCommand } from './args.js';
import { agentRequest } from './agent-client.js';
import { withAgent } from './kube-client.js';
import { rootDirFlag, rootDirOf } from './root-flag.js';

export const agentStatusCommand = defineCommand({
  name: 'agent status',
  summary: 'Show what the agent of a root dir runs',
  usage: 'podvisor agent status [--root-dir DIR] [-o json]',
  flags: [rootDirFlag, { name: 'output', short: 'o', type: 'string', values: ['json'], usage: 'Print the status as JSON.' }],
  run: (parsed, io) => {
    const rootDir = rootDirOf(parsed, io);
    return withAgent(io, async () => {
      const st = (await agentRequest(rootDir, 'GET', '/podvisor/v1/status')).json() as AgentStatus;
      if (parsed.flags.output === 'json') {
        io.stdout.write(`${JSON.stringify(st, null, 2)}\n`);
        return 0;
      }
      io.stdout.write(formatStatus(st));
      return 0;
    });
  },
});

/** What the text output reads of the agent's /podvisor/v1/status (a cluster node has no sources or manifests). */
interface AgentStatus {
  pid: number;
  version: string;
  uptimeSeconds: number;
  nodeName: string;
  rootDir: string;
  runtime: string;
  runtimeService?: { endpoint: string; pid?: number };
  pods: { total: number } & Record<string, number>;
  listen?: { socket?: string; https?: string; readOnly?: string };
  /** The root dir's service range and cluster DNS address (a standalone agent). */
  serviceNetwork?: { serviceClusterIPRange: string; clusterDNS: string };
  ingress?: { address: string; httpPort: number; httpsPort: number };
  sources?: Array<{ kind: string; location: string; error?: string }>;
  manifests?: Array<{ origin: string; pods: number; error?: string }>;
}

function duration(s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d}d${h}h` : h ? `${h}h${m}m` : m ? `${m}m${s % 60}s` : `${s}s`;
}

function formatStatus(st: AgentStatus): string {
  const pods = st.pods;
  const byPhase = Object.entries(pods)
    .filter(([k]) => k !== 'total')
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  const lines = [
    `pid:       ${st.pid}`,
    `version:   ${st.version}`,
    `uptime:    ${duration(st.uptimeSeconds)}`,
    `node:      ${st.nodeName}`,
    `root dir:  ${st.rootDir}`,
    `runtime:   ${st.runtime}${st.runtimeService ? ` at ${st.runtimeService.endpoint}${st.runtimeService.pid ? ` (service pid ${st.runtimeService.pid})` : ''}` : ''}`,
    `pods:      ${pods.total}${byPhase ? ` (${byPhase})` : ''}`,
    `listening: ${[st.listen?.socket, st.listen?.https, st.listen?.readOnly].filter(Boolean).join(', ')}`,
    ...(st.serviceNetwork ? [`services:  ${st.serviceNetwork.serviceClusterIPRange}, cluster DNS ${st.serviceNetwork.clusterDNS}:53`] : []),
    ...(st.ingress ? [`ingress:   http ${st.ingress.address}:${st.ingress.httpPort}, https ${st.ingress.address}:${st.ingress.httpsPort}`] : []),
    'sources:',
    ...(st.sources ?? []).map((s) => `  ${s.kind.padEnd(5)} ${s.location}${s.error ? `  error: ${s.error}` : ''}`),
  ];
  const broken = (st.manifests ?? []).filter((m) => m.error);
  if (broken.length) {
    lines.push('manifest errors (their pods keep running as they were):');
    for (const m of broken) lines.push(`  ${m.origin}:`, ...m.error!.split('\n').map((l) => `    ${l}`));
  }
  return `${lines.join('\n')}\n`;
}
