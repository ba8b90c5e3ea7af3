// The benchmark server: one HTTP port and one TCP port every probe of a run points at, in its own
// process so its CPU is nobody's. It counts what it served and can turn one pod's path unhealthy.

import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { serve } from '../lib/child-server.js';
import { preciseNow } from '../lib/stats.js';

export interface ServerPorts {
  httpPort: number;
  tcpPort: number;
}

export interface ServerCounts {
  at: number;
  http: number;
  httpFailed: number;
  tcp: number;
  /** Socket errors seen by the server (resets by a client that aborts are expected and harmless). */
  socketErrors: number;
}

export interface FlipRecord {
  key: string;
  /** When the path started answering 500 (ms since epoch). */
  flipAt: number;
  /** When the first request answered 500 arrived, i.e. the first probe at or after the flip. */
  firstFailAt?: number;
  /** Arrival times of every request answered 500 since the flip. */
  failAt: number[];
}

// The pattern of healthPath() in lib/manifests.ts; the captured key is the pod's name.
const HEALTH_PATH = /^\/pods\/([^/?]+)\/healthz/;

// The program's state lives in main(), one instance per process.
async function main(): Promise<void> {
  const counts: ServerCounts = { at: 0, http: 0, httpFailed: 0, tcp: 0, socketErrors: 0 };
  const unhealthy = new Map<string, FlipRecord>();
  const done: FlipRecord[] = [];

  const httpServer = http.createServer((req, res) => {
    counts.http++;
    const m = HEALTH_PATH.exec(req.url ?? '');
    const flip = m ? unhealthy.get(m[1]!) : undefined;
    if (flip) {
      const now = preciseNow();
      flip.firstFailAt ??= now;
      flip.failAt.push(now);
      counts.httpFailed++;
      res.writeHead(500, { 'Content-Type': 'text/plain', 'Content-Length': '4' });
      res.end('fail');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '2' });
    res.end('ok');
  });
  httpServer.on('connection', (s) => s.on('error', () => counts.socketErrors++));
  httpServer.on('clientError', (_err, socket) => {
    counts.socketErrors++;
    socket.destroy();
  });
  httpServer.keepAliveTimeout = 1000;

  const tcpServer = net.createServer((socket) => {
    counts.tcp++;
    socket.on('error', () => counts.socketErrors++);
    // The prober closes first; reading until its FIN lets the close complete on its side.
    socket.resume();
  });

  function listen(server: net.Server): Promise<number> {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, () => resolve((server.address() as AddressInfo).port));
    });
  }

  const ports: ServerPorts = { httpPort: await listen(httpServer), tcpPort: await listen(tcpServer) };

  const close = async () => {
    httpServer.closeAllConnections();
    await Promise.all([new Promise((r) => httpServer.close(r)), new Promise((r) => tcpServer.close(r))]);
  };

  serve(
    {
      ports: () => ports,
      counts: (): ServerCounts => ({ ...counts, at: preciseNow() }),
      /** Makes the pod's path answer 500 (healthy: false) or 200 again (healthy: true). */
      flip: ({ key, healthy }: { key: string; healthy: boolean }) => {
        if (healthy) {
          const rec = unhealthy.get(key);
          if (rec) done.push(rec);
          unhealthy.delete(key);
          return null;
        }
        const rec: FlipRecord = { key, flipAt: preciseNow(), failAt: [] };
        unhealthy.set(key, rec);
        return rec;
      },
      flips: (): FlipRecord[] => [...done, ...unhealthy.values()],
      stop: async () => {
        await close();
        return { ...counts, at: preciseNow() };
      },
    },
    close,
  );
}

await main();
