// The thin-client side of podvisor's kubectl-like commands (get, describe, exec, apply, delete,
// port-forward, top): API paths, the Accept header of a server-side Table, the shared flags, and the
// server's Status printed as kubectl prints it.

import type { CommandIO, FlagSpec } from './args.js';
import { NoAgentError, replyMessage, type AgentReply } from './agent-client.js';

/** What kubectl sends to get a Table, falling back to plain JSON. */
export const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

export type CoreResource = 'pods' | 'events' | 'configmaps' | 'secrets' | 'services' | 'endpoints' | 'endpointslices';

/** The resources outside the core group, with their group/version. */
const groupVersions: Partial<Record<CoreResource, string>> = { endpointslices: 'discovery.k8s.io/v1' };

/** `/api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]]` (`/apis/<group>/<version>/…` outside the core group); no namespace = across all namespaces. */
export function apiPath(resource: CoreResource, ns: string | undefined, name?: string, sub?: string): string {
  const gv = groupVersions[resource];
  const root = gv ? `/apis/${gv}` : '/api/v1';
  const base = ns === undefined ? root : `${root}/namespaces/${encodeURIComponent(ns)}`;
  return `${base}/${resource}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}${sub ? `/${sub}` : ''}`;
}

export const namespaceFlag: FlagSpec = {
  name: 'namespace',
  short: 'n',
  type: 'string',
  default: 'default',
  valueName: 'NS',
  usage: 'Namespace of the objects.',
};

/** A failed reply as kubectl prints it: `Error from server (NotFound): …`, or `The Pod "x" is invalid: …`. */
export function serverErrorText(r: AgentReply): string {
  const m = replyMessage(r);
  if (r.status === 422 && m.reason === 'Invalid') return `The ${m.message}\n`;
  return `Error from server (${m.reason}): ${m.message}\n`;
}

/** Runs a client command; no agent on the root dir is `error: …` and exit code 1. */
export async function withAgent(io: Pick<CommandIO, 'stderr'>, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof NoAgentError) {
      io.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

/** A relative `/api/...` path with query parameters (empty ones left out). */
export function withQuery(path: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
