// The shapes of a container's streams, from the runtime that starts them up to the servers that
// serve them: the options of a container's log (PodLogOptions), an exec or attach in progress, and
// the v4 Status its exit is reported in.

import type { Readable, Writable } from 'node:stream';

/** PodLogOptions: which container's log, and how much of it (the kubelet's /containerLogs query, the API's pods/log). */
export interface LogOptions {
  container: string;
  follow?: boolean;
  previous?: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  /** RFC 3339 */
  sinceTime?: string;
  timestamps?: boolean;
  limitBytes?: number;
}

/** An exec or attach in progress: the server pumps the client's streams into it. */
export interface ExecSession {
  stdin?: Writable;
  stdout?: Readable;
  stderr?: Readable;
  resize(width: number, height: number): void;
  /** The exit code; rejects when the command could not start (message for the Status). */
  exit: Promise<number>;
  /** Stops the command (client gone). */
  kill(): void;
}

const statusSuccess = { metadata: {}, status: 'Success' };

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
