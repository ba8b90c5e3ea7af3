// One UDP address a service port answers on: each client (address and port) gets its own socket to
// an endpoint the balancer chooses, replies go back from the service address, and a client's socket
// closes after it has been idle (kube-proxy's userspace UDP proxying, pkg/proxy/userspace).

import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Clock, Timer } from '../util/clock.js';
import type { RoundRobin } from './balancer.js';

/** A client's flow closes after this long without a datagram either way. */
const idleMs = 30_000;

interface Flow {
  socket: Socket;
  timer: Timer;
  /** Datagrams held until the flow's socket is connected. */
  queue?: Buffer[];
}

export class UdpListener {
  private readonly socket: Socket;
  private readonly flows = new Map<string, Flow>();

  constructor(
    readonly address: string,
    readonly port: number,
    private readonly balancer: () => RoundRobin,
    private readonly clock: Clock,
  ) {
    this.socket = createSocket('udp4');
    this.socket.on('message', (msg, from) => this.forward(msg, from));
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once('error', reject);
      this.socket.bind({ address: this.address, port: this.port, exclusive: true }, () => {
        this.socket.off('error', reject);
        this.socket.on('error', () => {});
        resolve();
      });
    });
  }

  close(): void {
    for (const k of [...this.flows.keys()]) this.drop(k);
    this.socket.close();
  }

  private drop(key: string): void {
    const f = this.flows.get(key);
    if (!f) return;
    this.flows.delete(key);
    f.timer.cancel();
    f.socket.close();
  }

  private touch(key: string, f: Flow): void {
    f.timer.cancel();
    f.timer = this.clock.setTimer(idleMs, () => this.drop(key));
  }

  private forward(msg: Buffer, from: RemoteInfo): void {
    const key = `${from.address}:${from.port}`;
    const flow = this.flows.get(key);
    if (!flow) {
      const endpoint = this.balancer().choose(from.address);
      if (!endpoint) return;
      const socket = createSocket('udp4');
      socket.on('error', () => this.drop(key));
      socket.on('message', (reply) => {
        const f = this.flows.get(key);
        if (f) this.touch(key, f);
        this.socket.send(reply, from.port, from.address);
      });
      socket.connect(endpoint.port, endpoint.ip);
      const f: Flow = { socket, timer: this.clock.setTimer(idleMs, () => this.drop(key)), queue: [msg] };
      this.flows.set(key, f);
      socket.once('connect', () => {
        if (this.flows.get(key) !== f) return;
        for (const m of f.queue ?? []) f.socket.send(m);
        delete f.queue;
      });
      return;
    }
    this.touch(key, flow);
    if (flow.queue) flow.queue.push(msg);
    else flow.socket.send(msg);
  }
}
