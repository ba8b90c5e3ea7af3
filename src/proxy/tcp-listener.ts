// One TCP address a service port answers on (its ClusterIP, a NodePort, the LoadBalancer address):
// each accepted connection is forwarded to an endpoint the balancer chooses, the next one tried when
// a connect fails (as kube-proxy's userspace proxier retries), both directions relayed with half-close.

import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Endpoint, RoundRobin } from './balancer.js';
import { adoptWithOnread, RelayDirection } from './tcp-relay.js';

/** Endpoints tried for one connection before it is dropped. */
const maxTries = 4;

interface Relay {
  client: Socket;
  /** Client to endpoint. */
  up: RelayDirection;
  /** Endpoint to client. */
  down: RelayDirection;
}

export class TcpListener {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly address: string,
    readonly port: number,
    private readonly balancer: () => RoundRobin,
    /** Where to dial an endpoint the agent cannot reach directly (pods under RootlessKit). */
    private readonly podAddress?: (host: string, port: number) => Promise<{ host: string; port: number }>,
  ) {
    this.server = createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (client) => this.accept(client));
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

  private accept(accepted: Socket): void {
    const up = new RelayDirection();
    const down = new RelayDirection();
    let client = adoptWithOnread(accepted, up.onread);
    if (!client) {
      client = accepted;
      client.pause();
      client.on('data', (chunk: Buffer) => up.pass(chunk));
    }
    this.track(client);
    client.on('error', () => client.destroy());
    this.dial({ client, up, down }, []);
  }

  private dial(relay: Relay, tried: Endpoint[]): void {
    const { client } = relay;
    const endpoint = tried.length < maxTries ? this.balancer().choose(client.remoteAddress ?? '', tried) : undefined;
    if (!endpoint) {
      client.destroy();
      return;
    }
    if (this.podAddress) {
      this.podAddress(endpoint.ip, endpoint.port).then(
        (to) => this.connectTo(relay, tried, endpoint, to),
        () => (client.destroyed ? undefined : this.dial(relay, [...tried, endpoint])),
      );
      return;
    }
    this.connectTo(relay, tried, endpoint, { host: endpoint.ip, port: endpoint.port });
  }

  private connectTo(relay: Relay, tried: Endpoint[], endpoint: Endpoint, to: { host: string; port: number }): void {
    const { client, up, down } = relay;
    if (client.destroyed) return;
    const upstream = connect({ host: to.host, port: to.port, allowHalfOpen: true, noDelay: true, onread: down.onread });
    this.track(upstream);
    const failed = () => {
      upstream.destroy();
      if (!client.destroyed) this.dial(relay, [...tried, endpoint]);
    };
    upstream.once('error', failed);
    upstream.once('connect', () => {
      upstream.off('error', failed);
      if (client.destroyed) {
        upstream.destroy();
        return;
      }
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      up.connect(client, upstream);
      down.connect(upstream, client);
      client.resume();
    });
  }
}
