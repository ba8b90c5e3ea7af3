// The unix sockets the agent and the process runtime place in a root dir, and the limit every one of
// them must fit: sun_path holds 108 bytes on Linux, the path and its terminating NUL (unix(7)).

import { join } from 'node:path';
import { runtimeStateDir } from './state.js';

/** The most bytes a unix socket's path may have. */
export const UNIX_SOCKET_PATH_MAX = 107;

/** The streaming server's socket in the runtime service's state dir (mode 0700, the socket 0600). */
export const STREAMING_SOCKET = 'streaming.sock';

/** The sockets placed under a root dir: the agent's API, the runtime service's CRI, its streaming server. */
export function rootDirSockets(rootDir: string): string[] {
  return [join(rootDir, 'podvisor.sock'), join(rootDir, 'runtime.sock'), join(runtimeStateDir(rootDir), STREAMING_SOCKET)];
}

/**
 * Why a root dir cannot hold its sockets (undefined when it can): the longest of them would not fit
 * a unix socket's path, so exec, attach and the agent's own API would fail later, in other words.
 */
export function rootDirSocketProblem(rootDir: string): string | undefined {
  const longest = rootDirSockets(rootDir).reduce((a, b) => (Buffer.byteLength(b) > Buffer.byteLength(a) ? b : a));
  const bytes = Buffer.byteLength(longest);
  if (bytes <= UNIX_SOCKET_PATH_MAX) return undefined;
  const room = UNIX_SOCKET_PATH_MAX - (bytes - Buffer.byteLength(rootDir));
  return `the root dir is too long for its unix sockets: ${longest} would be ${bytes} bytes, and a unix socket path holds at most ${UNIX_SOCKET_PATH_MAX}; use a root dir of at most ${room} bytes`;
}
