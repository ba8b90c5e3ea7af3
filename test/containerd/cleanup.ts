// Removes whatever a test's containerd still holds, so no container, shim or network outlives it.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function removeAllSandboxes(endpoint: string): Promise<void> {
  const sock = endpoint.replace(/^unix:\/\//, '');
  const ctr = (...args: string[]) => run('ctr', ['-a', sock, '-n', 'k8s.io', ...args]).then((r) => r.stdout);
  const tasks = (await ctr('tasks', 'ls', '-q').catch(() => '')).split('\n').filter(Boolean);
  for (const t of tasks) await ctr('tasks', 'kill', '-s', 'KILL', t).catch(() => {});
  for (const t of tasks) await ctr('tasks', 'rm', '-f', t).catch(() => {});
  const containers = (await ctr('containers', 'ls', '-q').catch(() => '')).split('\n').filter(Boolean);
  for (const c of containers) await ctr('containers', 'rm', c).catch(() => {});
}
