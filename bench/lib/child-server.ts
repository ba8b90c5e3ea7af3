// The child side of the bench's IPC: a measured process exposes named handlers, answers calls, and
// cleans up and exits when told to stop or when its parent goes away.

import { BOOTED, STOP, type CallMessage, type ChildMessage } from './protocol.js';

export type Handler = (params: any) => unknown;

export interface ChildServer {
  note(name: string, data?: unknown): void;
}

/**
 * Serves handlers over process IPC. `shutdown` runs when the parent disconnects without a stop call,
 * so no process a child started survives a crashed bench.
 */
export function serve(handlers: Record<string, Handler>, shutdown: () => Promise<void> = async () => {}): ChildServer {
  if (!process.send) throw new Error('this program is started by the bench over IPC (see bench/main.ts)');
  const send = (m: ChildMessage, cb?: () => void) => {
    if (process.connected) process.send!(m, undefined, undefined, cb ? () => cb() : undefined);
    else cb?.();
  };
  let stopping = false;
  process.on('message', (raw: unknown) => {
    const m = raw as CallMessage;
    if (!m || m.kind !== 'call') return;
    const handler = handlers[m.method];
    if (m.method === STOP) stopping = true;
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown method ${m.method}`);
        return handler(m.params);
      })
      .then(
        (result) => send({ kind: 'reply', id: m.id, ok: true, result: result ?? null }, m.method === STOP ? () => process.exit(0) : undefined),
        (err: unknown) =>
          send(
            { kind: 'reply', id: m.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) },
            m.method === STOP ? () => process.exit(1) : undefined,
          ),
      );
  });
  const bail = () => {
    if (stopping) return;
    stopping = true;
    void shutdown().finally(() => process.exit(0));
  };
  process.on('disconnect', bail);
  process.on('SIGTERM', bail);
  process.on('SIGINT', bail);
  send({ kind: 'note', name: BOOTED, data: { pid: process.pid } });
  return { note: (name, data) => send({ kind: 'note', name, data }) };
}
