// The bench's handle on a floor program (bench/procs/*-floor.ts): start its work, measure it over
// the same window as the agent, read its memory from /proc.

import { ChildHandle } from './child-handle.js';
import type { MemorySample } from './proc.js';
import type { WindowReport } from './window.js';

export class FloorClient<Params, StartResult = null> {
  private constructor(private readonly child: ChildHandle) {}

  static async start<Params, StartResult = null>(program: string): Promise<FloorClient<Params, StartResult>> {
    return new FloorClient<Params, StartResult>(await ChildHandle.start(program));
  }

  get pid(): number {
    return this.child.pid;
  }

  run(params: Params): Promise<StartResult> {
    return this.child.call('start', params);
  }

  /** Ends the processes a run started (floors that keep some, between rounds). */
  clear(): Promise<void> {
    return this.child.call('clear');
  }

  begin(): Promise<void> {
    return this.child.call('begin');
  }

  read(): Promise<WindowReport> {
    return this.child.call('read');
  }

  memory(): MemorySample {
    return this.child.memory();
  }

  stop(): Promise<WindowReport> {
    return this.child.stop<WindowReport>();
  }

  async kill(): Promise<void> {
    await this.child.kill();
  }
}
