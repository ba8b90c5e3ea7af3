// The message shapes a bench process and its measured children exchange over the Node IPC channel:
// calls with replies, and notes a child sends unasked (e.g. the moment it saw a Killing event).

export interface CallMessage {
  kind: 'call';
  id: number;
  method: string;
  params?: unknown;
}

export type ReplyMessage = { kind: 'reply'; id: number; ok: true; result: unknown } | { kind: 'reply'; id: number; ok: false; error: string };

export interface NoteMessage {
  kind: 'note';
  name: string;
  data?: unknown;
}

export type ChildMessage = ReplyMessage | NoteMessage;

/** Sent once by every child when it is ready to take calls. */
export const BOOTED = 'booted';
/** The call after which a child cleans up, replies with its final figures and exits. */
export const STOP = 'stop';
