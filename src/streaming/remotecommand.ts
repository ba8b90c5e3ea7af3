// Exec and attach sessions as the kubelet's remotecommand serves them: the options from the query,
// the session's outcome, and the terminal resize messages (the exit Status is runtime/streams.ts's).

import type { StreamOptions } from '../kubeapi/backend.js';
import type { ExecSession } from '../runtime/streams.js';

/** The query of an exec/attach request (`command` repeated; Go-style booleans). */
export function execOptions(q: URLSearchParams, defaultContainer: string, attach: boolean): StreamOptions {
  const b = (name: string) => ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(q.get(name) ?? '');
  return {
    container: q.get('container') || defaultContainer,
    command: attach ? [] : q.getAll('command'),
    stdin: b('stdin'),
    stdout: b('stdout'),
    stderr: b('stderr'),
    tty: b('tty'),
  };
}

/** Parses `{"Width":W,"Height":H}` messages (one per line on SPDY, one per message on WebSocket). */
export function applyResize(session: ExecSession, text: string): void {
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const m = JSON.parse(line) as { Width?: number; Height?: number };
      if (typeof m.Width === 'number' && typeof m.Height === 'number') session.resize(m.Width, m.Height);
    } catch {
      /* a malformed resize message is ignored, as the kubelet does */
    }
  }
}

/** The exit code, or the start failure, of a session. */
export async function outcome(session: ExecSession): Promise<number | Error> {
  try {
    return await session.exit;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
