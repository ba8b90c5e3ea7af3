// The cluster DNS server of the agent (the role CoreDNS plays): UDP queries for names in the cluster
// domain are answered from the stored Services and Endpoints (records.ts), which it watches; other
// names are forwarded to the host's resolvers (the nameservers of /etc/resolv.conf) and their answers
// relayed as they are. Packets are read and written with dns-packet.

import { createSocket, type Socket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import type { ServiceLike } from '../api/validation/service.js';
import type { KubeObject, ObjectsBackend, Watch, WatchEvent } from '../kubeapi/backend.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { clusterRecords, type ClusterView, type EndpointsView } from './records.js';

export interface ClusterDNSDeps {
  objects: ObjectsBackend;
  logger: Logger;
  clock: Clock;
  /** The cluster domain (cluster.local). */
  domain?: string;
  /** Where names outside the cluster domain go (host:port or host); none: answered SERVFAIL. */
  upstreams: readonly string[];
}

const rcodes = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3 } as const;

/** A forwarded query's answer is awaited this long. */
const forwardTimeoutMs = 5000;

/** The nameservers of a resolv.conf text. */
export function resolvConfNameservers(text: string): string[] {
  return text
    .split('\n')
    .map((l) => /^\s*nameserver\s+(\S+)/.exec(l)?.[1])
    .filter((x): x is string => !!x);
}

export class ClusterDNS implements ClusterView {
  private readonly services = new Map<string, ServiceLike>();
  private readonly eps = new Map<string, EndpointsView>();
  private readonly watches: Watch[] = [];
  private socket?: Socket;
  readonly domain: string;

  constructor(private readonly deps: ClusterDNSDeps) {
    this.domain = deps.domain ?? 'cluster.local';
  }

  service(namespace: string, name: string): ServiceLike | undefined {
    return this.services.get(`${namespace}/${name}`);
  }

  endpoints(namespace: string, name: string): EndpointsView | undefined {
    return this.eps.get(`${namespace}/${name}`);
  }

  /** Watches the stored objects and listens on address:port (UDP). */
  async listen(address: string, port: number): Promise<{ address: string; port: number }> {
    const keep =
      <T>(into: Map<string, T>) =>
      (ev: WatchEvent<KubeObject>) => {
        const k = `${ev.object.metadata?.namespace ?? ''}/${ev.object.metadata?.name ?? ''}`;
        if (ev.type === 'DELETED') into.delete(k);
        else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') into.set(k, ev.object as T);
      };
    for (const [kind, into] of [
      ['Service', this.services],
      ['Endpoints', this.eps],
    ] as const) {
      const s = this.deps.objects.storage(kind);
      if (s?.watch) this.watches.push(s.watch('', keep(into as Map<string, unknown>)));
    }
    const socket = createSocket('udp4');
    this.socket = socket;
    socket.on('message', (msg, from) => void this.answer(msg).then((reply) => reply && socket.send(reply, from.port, from.address)));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address, port, exclusive: true }, () => {
        socket.off('error', reject);
        socket.on('error', (err) => this.deps.logger.warn('Cluster DNS socket error', { err: err.message }));
        resolve();
      });
    });
    const a = socket.address();
    return { address: a.address, port: a.port };
  }

  close(): void {
    for (const w of this.watches.splice(0)) w.stop();
    this.socket?.close();
    this.socket = undefined;
  }

  /** The reply to one query packet; undefined when it cannot be read. */
  async answer(msg: Buffer): Promise<Buffer | undefined> {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return undefined;
    }
    const q = query.questions?.[0];
    const reply = (rcode: keyof typeof rcodes, answers: dnsPacket.Answer[]) =>
      dnsPacket.encode({
        type: 'response',
        id: query.id ?? 0,
        // The header's low four bits carry the response code (dns-packet encodes it from the flags).
        flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcodes[rcode],
        questions: query.questions ?? [],
        answers,
      } as dnsPacket.Packet);
    if (!q) return reply('FORMERR', []);
    const local = clusterRecords(this, this.domain, q.name, q.type);
    if (local) return reply(local.rcode, local.answers);
    return (await this.forward(msg)) ?? reply('SERVFAIL', []);
  }

  /** The host resolvers' answer to a query, as they sent it. */
  private async forward(msg: Buffer): Promise<Buffer | undefined> {
    for (const upstream of this.deps.upstreams) {
      const [host, port = '53'] = upstream.includes(':') && !upstream.includes('::') ? upstream.split(':') : [upstream];
      const answer = await new Promise<Buffer | undefined>((resolve) => {
        const s = createSocket(host!.includes(':') ? 'udp6' : 'udp4');
        const timer = this.deps.clock.setTimer(forwardTimeoutMs, () => done(undefined));
        const done = (b: Buffer | undefined) => {
          timer.cancel();
          s.close();
          resolve(b);
        };
        s.on('error', () => done(undefined));
        s.on('message', (b) => done(b));
        s.send(msg, Number(port), host);
      });
      if (answer) return answer;
    }
    return undefined;
  }
}
