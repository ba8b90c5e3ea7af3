// Root dir selection (root, XDG_STATE_HOME, home fallback) and the per-pod paths under it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerLogPath, defaultRootDir, podLogDir, sandboxDir } from '../../src/runtime/root-dir.js';

test('defaultRootDir', async (t) => {
  const cases: Array<{ name: string; env: NodeJS.ProcessEnv; uid: number | undefined; want: string }> = [
    { name: 'root', env: { HOME: '/root', XDG_STATE_HOME: '/x' }, uid: 0, want: '/var/lib/podvisor' },
    { name: 'user with XDG_STATE_HOME', env: { HOME: '/home/u', XDG_STATE_HOME: '/home/u/state' }, uid: 1000, want: '/home/u/state/podvisor' },
    { name: 'user without XDG_STATE_HOME', env: { HOME: '/home/u' }, uid: 1000, want: '/home/u/.local/state/podvisor' },
    { name: 'empty XDG_STATE_HOME', env: { HOME: '/home/u', XDG_STATE_HOME: '' }, uid: 1000, want: '/home/u/.local/state/podvisor' },
    { name: 'relative XDG_STATE_HOME is ignored', env: { HOME: '/home/u', XDG_STATE_HOME: 'rel' }, uid: 1000, want: '/home/u/.local/state/podvisor' },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(defaultRootDir(c.env, c.uid), c.want));
  }
});

test('per-pod paths', () => {
  assert.equal(sandboxDir('/r', 'u1'), '/r/sandboxes/u1');
  assert.equal(podLogDir('/r', 'default', 'web', 'u1'), '/r/pods/default_web_u1');
  assert.equal(containerLogPath('app', 2), 'app/2.log');
});
