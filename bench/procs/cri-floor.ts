// The containerd floor: the CRI calls that start a pod (RunPodSandbox, CreateContainer,
// StartContainer) and an exec probe (ExecSync), made by a bare script straight through
// @grpc/grpc-js on the same proto, with nothing of the agent: what those calls cost by themselves.

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath } from '../../src/runtime/cri/proto.js';
import { serve } from '../lib/child-server.js';
import { runSlots, type Slots } from '../lib/slots.js';
import { preciseNow } from '../lib/stats.js';
import { MeasureWindow } from '../lib/window.js';

export interface CriFloorStartParams {
  endpoint: string;
  image: string;
  count: number;
  command: string[];
  /** The readiness command, run once through ExecSync after the start (ready). */
  readyCommand: string[];
  /** Directory for the sandboxes' logs. */
  logDir: string;
}

export interface CriFloorStartResult {
  /** ms from the round's start to each pod's StartContainer reply. */
  running: number[];
  /** ms from the round's start to each pod's first successful ExecSync of readyCommand. */
  ready: number[];
}

export interface CriFloorExecParams {
  count: number;
  periodMs: number;
  command: string[];
}

type Call = (req: object) => Promise<any>;

// The program's state lives in main(), one instance per process.
async function main(): Promise<void> {
  const window = new MeasureWindow();
  let slots: Slots | undefined;
  let rt: grpc.Client | undefined;
  const containers: string[] = [];
  const call =
    (method: string): Call =>
    (req) =>
      new Promise((resolve, reject) => (rt as any)[method](req, (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res))));

  function connect(endpoint: string): void {
    const def = protoLoader.loadSync(protoPath(), { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true });
    const v1 = (grpc.loadPackageDefinition(def) as any).runtime.v1;
    rt = new v1.RuntimeService(endpoint, grpc.credentials.createInsecure());
  }

  async function startPod(p: CriFloorStartParams, i: number, t0: number, out: CriFloorStartResult): Promise<void> {
    const name = `floor-${i}`;
    const sandboxConfig = {
      metadata: { name, uid: randomUUID(), namespace: 'default', attempt: 0 },
      hostname: name,
      logDirectory: `${p.logDir}/${name}`,
      labels: { app: 'podvisor-bench-floor' },
      linux: { securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    };
    const { podSandboxId } = await call('RunPodSandbox')({ config: sandboxConfig });
    const { containerId } = await call('CreateContainer')({
      podSandboxId,
      config: { metadata: { name: 'main', attempt: 0 }, image: { image: p.image }, command: p.command, logPath: 'main/0.log', linux: {} },
      sandboxConfig,
    });
    await call('StartContainer')({ containerId });
    out.running[i] = preciseNow() - t0;
    const r = await call('ExecSync')({ containerId, cmd: p.readyCommand, timeout: 1 });
    if (r.exitCode !== 0) throw new Error(`${p.readyCommand.join(' ')} exited ${r.exitCode}`);
    out.ready[i] = preciseNow() - t0;
    containers.push(containerId);
  }

  serve(
    {
      start: async (p: CriFloorStartParams): Promise<CriFloorStartResult> => {
        if (!rt) connect(p.endpoint);
        await call('Version')({});
        const out: CriFloorStartResult = { running: [], ready: [] };
        const t0 = preciseNow();
        await Promise.all(Array.from({ length: p.count }, (_, i) => startPod(p, i, t0, out)));
        return out;
      },
      exec: async (p: CriFloorExecParams) => {
        const exec = (slot: number) => {
          call('ExecSync')({ containerId: containers[slot % containers.length], cmd: p.command, timeout: 1 }).then(
            (r) => window.count(r.exitCode === 0 ? 'ok' : 'failed'),
            () => window.count('errors'),
          );
        };
        for (let i = 0; i < 5; i++) await call('ExecSync')({ containerId: containers[0], cmd: p.command, timeout: 1 });
        window.begin();
        slots = runSlots(p.count, p.periodMs, exec, (ms) => window.late(ms));
        return null;
      },
      begin: () => window.begin(),
      read: () => window.read(),
      stop: () => {
        slots?.stop();
        rt?.close();
        return window.read();
      },
    },
    async () => {
      slots?.stop();
      rt?.close();
    },
  );
}

await main();
