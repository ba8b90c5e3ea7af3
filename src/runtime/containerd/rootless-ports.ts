// RootlessKit's port driver as `rootlessctl add-ports` drives it (its REST API on
// <state-dir>/api.sock, POST /v1/ports): a port of the host's loopback forwarded to an address in
// RootlessKit's network namespace, where the pods' IPs are, so that the agent reaches a pod's port
// from outside (its httpGet, tcpSocket and grpc probes).

import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { managedContainerdLayout } from './config.js';
import { rootlessKitStateDir } from './rootless.js';

/** Where the agent dials for a pod's address. */
export interface DialAddress {
  host: string;
  port: number;
}

/** A free port of the host's loopback (the kernel's pick; RootlessKit listens there next). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function apiRequest(socketPath: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.once('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The forwards of one RootlessKit (its API socket), added on first use and kept while it runs. */
export class RootlessPortForwards {
  private readonly forwards = new Map<string, Promise<DialAddress>>();

  constructor(private readonly apiSocket: string) {}

  /** The loopback address forwarded to childIP:childPort in RootlessKit's network namespace. */
  dial(childIP: string, childPort: number): Promise<DialAddress> {
    const key = `${childIP}:${childPort}`;
    let f = this.forwards.get(key);
    if (!f) {
      f = this.add(childIP, childPort);
      this.forwards.set(key, f);
      // A failure is not kept: the next probe asks again (RootlessKit restarted, say).
      f.catch(() => this.forwards.delete(key));
    }
    return f;
  }

  private async add(childIP: string, childPort: number): Promise<DialAddress> {
    let last = '';
    // The port picked may be taken meanwhile by another process: a few picks.
    for (let attempt = 0; attempt < 5; attempt++) {
      const parentPort = await freeLoopbackPort();
      const r = await apiRequest(this.apiSocket, 'POST', '/v1/ports', { proto: 'tcp', parentIP: '127.0.0.1', parentPort, childIP, childPort });
      if (r.status >= 200 && r.status < 300) return { host: '127.0.0.1', port: parentPort };
      last = r.text.trim();
    }
    throw new Error(`RootlessKit could not forward a port to ${childIP}:${childPort}: ${last}`);
  }
}

/** The forwards of the root dir's containerd under RootlessKit. */
export function rootlessPortForwards(rootDir: string): RootlessPortForwards {
  return new RootlessPortForwards(join(rootlessKitStateDir(managedContainerdLayout(rootDir).dir), 'api.sock'));
}
