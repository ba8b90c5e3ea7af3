// The shapes of a container's streams, from the runtime that starts them up to the servers that
// serve them: the options of a container's log (PodLogOptions) and an exec or attach in progress.

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
