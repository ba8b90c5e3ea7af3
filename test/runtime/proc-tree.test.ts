// The kernel's per-task children lists as the exec path reads them: a process's whole subtree
// (grandchildren included), nothing of other processes, and a process that is gone has none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { childrenTree, readProcTable } from '../../src/runtime/process/proc-tree.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('childrenTree: the subtree of a process, as the full /proc table links it', async (t) => {
  // sh → (sh → sleep) and sleep: two children, one grandchild.
  const root = spawn('sh', ['-c', '(sleep 30; true) & sleep 30 & wait'], { stdio: 'ignore', detached: true });
  t.after(() => {
    try {
      process.kill(-root.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  let tree: number[] | undefined;
  for (let i = 0; i < 200; i++) {
    tree = childrenTree(root.pid!);
    if (tree === undefined || tree.length >= 3) break;
    await sleep(25);
  }
  if (tree === undefined) return t.skip('this kernel keeps no /proc/<pid>/task/<tid>/children lists');
  const table = readProcTable();
  const expected = new Set<number>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of table.values()) {
      if (!expected.has(e.pid) && (e.ppid === root.pid || expected.has(e.ppid))) {
        expected.add(e.pid);
        grew = true;
      }
    }
  }
  assert.deepEqual(new Set(tree), expected);
  assert.equal(tree.length, 3);
  assert.ok(!tree.includes(process.pid));
});

test('childrenTree: a process that is gone has no subtree', async () => {
  const child = spawn('true', [], { stdio: 'ignore' });
  await new Promise((r) => child.once('close', r));
  assert.deepEqual(childrenTree(child.pid!), []);
});
