// Reads a kubeconfig file as client-go's clientcmd does for a node: the current context's cluster
// (server, CA) and user (bearer token or token file, or client certificate and key, inline or as files
// relative to the kubeconfig's folder).

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';

/** What an API client needs to reach and authenticate to the API server. */
export interface ClusterCredentials {
  /** `https://host:port`, no trailing slash. */
  server: string;
  /** PEM of the CA that signed the API server's serving certificate; the system CAs when unset. */
  ca?: Buffer;
  insecureSkipTLSVerify?: boolean;
  token?: string;
  /** PEM client certificate and key. */
  cert?: Buffer;
  key?: Buffer;
  /** TLS server name to check, when it differs from the server's host. */
  tlsServerName?: string;
}

type Named<T> = { name?: string } & T;
interface KubeconfigFile {
  'current-context'?: string;
  clusters?: Array<Named<{ cluster?: Record<string, unknown> }>>;
  users?: Array<Named<{ user?: Record<string, unknown> }>>;
  contexts?: Array<Named<{ context?: { cluster?: string; user?: string } }>>;
}

/** A kubeconfig that cannot be used, with the reason in clientcmd's spirit. */
export class KubeconfigError extends Error {
  constructor(file: string, message: string) {
    super(`invalid kubeconfig ${file}: ${message}`);
    this.name = 'KubeconfigError';
  }
}

/** Loads the current context of a kubeconfig file (or `context` when given). */
export function loadKubeconfig(file: string, context?: string): ClusterCredentials {
  let doc: KubeconfigFile;
  try {
    doc = (parse(readFileSync(file, 'utf8')) ?? {}) as KubeconfigFile;
  } catch (err) {
    throw new KubeconfigError(file, (err as Error).message);
  }
  return credentialsFrom(doc, file, context);
}

/** The credentials of a parsed kubeconfig; `file` names it in errors and anchors relative paths. */
export function credentialsFrom(doc: KubeconfigFile, file: string, context?: string): ClusterCredentials {
  const fail = (msg: string): never => {
    throw new KubeconfigError(file, msg);
  };
  const base = dirname(resolve(file));
  const ctxName = context ?? doc['current-context'];
  let ctx: { cluster?: string; user?: string } | undefined;
  if (ctxName) {
    ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
    if (!ctx) fail(`context "${ctxName}" not found`);
  } else if (doc.contexts?.length === 1) {
    ctx = doc.contexts[0]!.context;
  } else {
    fail('no current-context');
  }
  const cluster = doc.clusters?.find((c) => c.name === ctx!.cluster)?.cluster ?? fail(`cluster "${ctx!.cluster ?? ''}" not found`);
  const user = ctx!.user === undefined ? {} : (doc.users?.find((u) => u.name === ctx!.user)?.user ?? fail(`user "${ctx!.user}" not found`));

  const str = (o: Record<string, unknown>, k: string): string | undefined => (typeof o[k] === 'string' && o[k] !== '' ? (o[k] as string) : undefined);
  const readPath = (p: string): Buffer => {
    try {
      return readFileSync(isAbsolute(p) ? p : resolve(base, p));
    } catch (err) {
      return fail((err as Error).message);
    }
  };
  const dataOrFile = (o: Record<string, unknown>, dataKey: string, fileKey: string): Buffer | undefined => {
    const data = str(o, dataKey);
    if (data) return Buffer.from(data, 'base64');
    const path = str(o, fileKey);
    return path ? readPath(path) : undefined;
  };

  const server = (str(cluster, 'server') ?? fail('cluster has no server')).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(server)) fail(`server "${server}" is not an http(s) URL`);
  const creds: ClusterCredentials = { server };
  const ca = dataOrFile(cluster, 'certificate-authority-data', 'certificate-authority');
  if (ca) creds.ca = ca;
  if (cluster['insecure-skip-tls-verify'] === true) creds.insecureSkipTLSVerify = true;
  const tlsServerName = str(cluster, 'tls-server-name');
  if (tlsServerName) creds.tlsServerName = tlsServerName;

  const token = str(user, 'token') ?? (str(user, 'tokenFile') ? readPath(str(user, 'tokenFile')!).toString('utf8').trim() : undefined);
  if (token) creds.token = token;
  const cert = dataOrFile(user, 'client-certificate-data', 'client-certificate');
  const key = dataOrFile(user, 'client-key-data', 'client-key');
  if (cert && !key) fail('client certificate without client key');
  if (key && !cert) fail('client key without client certificate');
  if (cert && key) {
    creds.cert = cert;
    creds.key = key;
  }
  if (user.exec || user['auth-provider']) fail('exec and auth-provider credentials are not supported; use a token or a client certificate');
  return creds;
}
