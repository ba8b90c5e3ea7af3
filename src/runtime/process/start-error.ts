// Messages for a process that could not be started, worded as runc/containerd word them, so the
// status and events read as they would on a node with a container runtime.

import { stat } from 'node:fs/promises';

/** A working directory that cannot be entered: runc's words, naming the container's field instead of an OCI config.json. */
export function workingDirError(cwd: string, problem: string): string {
  return `chdir to workingDir ${JSON.stringify(cwd)} failed: ${problem}`;
}

/** Why spawning command in cwd failed, e.g. `exec: "nosuchcmd": executable file not found in $PATH`. */
export async function describeSpawnError(err: NodeJS.ErrnoException, command: string, cwd: string): Promise<string> {
  if (err.code === 'ENOENT' || err.code === 'ENOTDIR') {
    // libuv reports a missing working directory as ENOENT for the command; tell them apart.
    const cwdProblem = await stat(cwd).then(
      (st) => (st.isDirectory() ? undefined : 'not a directory'),
      (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? 'no such file or directory' : e.message),
    );
    if (cwdProblem) return workingDirError(cwd, cwdProblem);
    if (!command.includes('/')) return `exec: ${JSON.stringify(command)}: executable file not found in $PATH`;
    return `exec: ${JSON.stringify(command)}: stat ${command}: no such file or directory`;
  }
  if (err.code === 'EACCES') return `exec: ${JSON.stringify(command)}: permission denied`;
  // execve(2) refuses a file that is neither a binary nor a #! script; runc words it so.
  if (err.code === 'ENOEXEC') return `exec: ${JSON.stringify(command)}: exec format error`;
  return `exec: ${JSON.stringify(command)}: ${err.message}`;
}
