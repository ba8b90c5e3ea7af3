// The bench's handle on the benchmark server process (bench/procs/probe-server.ts).

import { ChildHandle } from './child-handle.js';
import type { FlipRecord, ServerCounts, ServerPorts } from '../procs/probe-server.js';

export type { FlipRecord, ServerCounts, ServerPorts };

export class ServerClient {
  private constructor(
    private readonly child: ChildHandle,
    readonly ports: ServerPorts,
  ) {}

  static async start(): Promise<ServerClient> {
    const child = await ChildHandle.start('probe-server');
    try {
      return new ServerClient(child, await child.call<ServerPorts>('ports'));
    } catch (err) {
      await child.kill();
      throw err;
    }
  }

  counts(): Promise<ServerCounts> {
    return this.child.call('counts');
  }

  flip(key: string, healthy: boolean): Promise<FlipRecord | null> {
    return this.child.call('flip', { key, healthy });
  }

  flips(): Promise<FlipRecord[]> {
    return this.child.call('flips');
  }

  async stop(): Promise<ServerCounts> {
    return this.child.stop<ServerCounts>();
  }
}
