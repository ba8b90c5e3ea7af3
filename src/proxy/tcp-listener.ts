// One TCP address a service port answers on (its ClusterIP, a NodePort, the LoadBalancer address):
// each accepted connection is forwarded to an endpoint the balancer chooses, the next one tried when
// a connect fails (as kube-proxy's userspace proxier retries), both directions piped with half-close.

import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Endpoint, RoundRobin } from './balancer.js';

/** Endpoints tried for one connection before it is dropped. */
const maxTries = 4;

export class TcpListener {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly address: string,
    readonly port: number,
    private readonly balancer: () => RoundRobin,
  ) {
    this.server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => this.accept(client));
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: this.address, port: this.port, exclusive: true }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  close(): void {
    this.server.close();
    for (const s of this.sockets) s.destroy();
  }

  private track(s: Socket): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
  }

  private accept(client: Socket): void {
    this.track(client);
    client.on('error', () => client.destroy());
    client.pause();
    this.dial(client, []);
  }

  private dial(client: Socket, tried: Endpoint[]): void {
    const endpoint = tried.length < maxTries ? this.balancer().choose(client.remoteAddress ?? '', tried) : undefined;
    if (!endpoint) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: endpoint.ip, port: endpoint.port, allowHalfOpen: true, noDelay: true });
    this.track(upstream);
    const failed = () => {
      upstream.destroy();
      if (!client.destroyed) this.dial(client, [...tried, endpoint]);
    };
    upstream.once('error', failed);
    upstream.once('connect', () => {
      upstream.off('error', failed);
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }
}
