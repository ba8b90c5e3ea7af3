// The kubelet port's streaming routes over the same handlers as the API's pods/exec, attach and
// portforward: /exec and /attach /{ns}/{pod}[/{uid}]/{container}?command=…&input=1&output=1&error=1&tty=1
// and /portForward/{ns}/{pod}[/{uid}] (WebSocket: ?port=N), the names the API server uses when it
// proxies to a kubelet, translated into the API's (container=, stdin/stdout/stderr=, ports=).

import type { IncomingMessage } from 'node:http';
import type { KubeBackend } from '../kubeapi/backend.js';
import { createStreamingUpgradeHandler, type UpgradeHandler } from './upgrade.js';

const execRe = /^\/(exec|attach)\/([^/]+)\/([^/]+)(?:\/([^/]+))?\/([^/]+)$/;
const pfRe = /^\/portForward\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/;

/** The API path and query of a kubelet streaming request, or undefined for another path. */
export function translateKubeletStreamingURL(rawUrl: string): { url: string; uid?: string; namespace: string; name: string } | undefined {
  const u = new URL(rawUrl, 'http://localhost');
  const q = u.searchParams;
  let m = execRe.exec(u.pathname);
  if (m) {
    const [, sub, ns, pod, uid, container] = m;
    const out = new URLSearchParams();
    out.set('container', decodeURIComponent(container!));
    for (const c of q.getAll('command')) out.append('command', c);
    for (const [from, to] of [
      ['input', 'stdin'],
      ['output', 'stdout'],
      ['error', 'stderr'],
      ['tty', 'tty'],
    ] as const) {
      const v = q.get(from) ?? q.get(to);
      if (v !== null) out.set(to, v);
    }
    return {
      url: `/api/v1/namespaces/${ns}/pods/${pod}/${sub}?${out.toString()}`,
      namespace: decodeURIComponent(ns!),
      name: decodeURIComponent(pod!),
      ...(uid ? { uid: decodeURIComponent(uid) } : {}),
    };
  }
  m = pfRe.exec(u.pathname);
  if (m) {
    const [, ns, pod, uid] = m;
    const out = new URLSearchParams();
    for (const p of [...q.getAll('port'), ...q.getAll('ports')]) out.append('ports', p);
    const qs = out.toString();
    return {
      url: `/api/v1/namespaces/${ns}/pods/${pod}/portforward${qs ? `?${qs}` : ''}`,
      namespace: decodeURIComponent(ns!),
      name: decodeURIComponent(pod!),
      ...(uid ? { uid: decodeURIComponent(uid) } : {}),
    };
  }
  return undefined;
}

/** The upgrade handler of the kubelet port's /exec, /attach and /portForward. */
export function createKubeletStreamingHandler(backend: KubeBackend): UpgradeHandler {
  const api = createStreamingUpgradeHandler(backend);
  return (req: IncomingMessage, socket, head) => {
    const t = translateKubeletStreamingURL(req.url ?? '/');
    if (!t) return false;
    // A request naming a UID is for that pod only: another pod of the same name is not it.
    if (t.uid !== undefined && backend.getPod(t.namespace, t.name)?.metadata?.uid !== t.uid) {
      const body = `pod ${t.namespace}/${t.name} with UID ${t.uid} not found\n`;
      socket.end(`HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return true;
    }
    req.url = t.url;
    return api(req, socket, head);
  };
}
