// The bench's handle on the agent host process: typed calls for loading, starting, waiting and
// measuring, with RSS and CPU read from /proc so they are the agent's alone.

import { ChildHandle } from './child-handle.js';
import type { AgentWindow, EventNote, LoadParams, LoadReply, StartReply, WaitParams, WaitReply } from './agent-protocol.js';
import type { CpuSample, MemorySample } from './proc.js';

export class AgentClient {
  private constructor(private readonly child: ChildHandle) {}

  static async start(): Promise<AgentClient> {
    return new AgentClient(await ChildHandle.start('agent-host'));
  }

  get pid(): number {
    return this.child.pid;
  }

  load(p: LoadParams): Promise<LoadReply> {
    return this.child.call('load', p);
  }

  startPods(manifestDir: string): Promise<StartReply> {
    return this.child.call('start', { manifestDir });
  }

  waitFor(p: WaitParams): Promise<WaitReply> {
    return this.child.call('waitFor', p, p.timeoutMs + 10_000);
  }

  /** Terminates every pod started so far and waits until their containers are gone. */
  terminateAll(gracePeriodSeconds = 0): Promise<void> {
    return this.child.call('terminateAll', { gracePeriodSeconds });
  }

  begin(): Promise<void> {
    return this.child.call('begin');
  }

  read(): Promise<AgentWindow> {
    return this.child.call('read');
  }

  onEvent(fn: (e: EventNote) => void): void {
    this.child.onNote('event', (d) => fn(d as EventNote));
  }

  memory(): MemorySample {
    return this.child.memory();
  }

  cpu(): CpuSample {
    return this.child.cpu();
  }

  /** Stops every pod at once, closes the agent and ends its process. */
  async stop(): Promise<AgentWindow> {
    return this.child.stop<AgentWindow>(undefined, 120_000);
  }

  async kill(): Promise<void> {
    await this.child.kill();
  }

  /** kill -9: the agent dies without cleaning up. */
  async killHard(): Promise<void> {
    await this.child.killHard();
  }
}
