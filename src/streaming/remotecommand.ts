// Exec and attach sessions as the kubelet's remotecommand serves them: the options from the query,
// the Status written on the error stream when the command ends (v4: JSON, NonZeroExitCode with the
// exit code as a cause), and the terminal resize messages.

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

export const statusSuccess = { metadata: {}, status: 'Success' };

/** The v4 error-stream Status for an exit code (or a failure to run). */
export function exitStatus(code: number | Error, command: string[]): Record<string, unknown> {
  if (code instanceof Error) {
    return { metadata: {}, status: 'Failure', message: code.message, reason: 'InternalError', details: { causes: [{ message: code.message }] }, code: 500 };
  }
  if (code === 0) return statusSuccess;
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
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
