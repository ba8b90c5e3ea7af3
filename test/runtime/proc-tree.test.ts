// The kernel's per-task children lists as the exec path reads them: a process's whole subtree
// (grandchildren included), nothing of other processes, and a process that is gone has none; a
// tracker forgetting an ended exec still kills what it left holding its output.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { childrenTree, ProcSnapshots, ProcTreeTracker, readProcTable, stdioTargets } from '../../src/runtime/process/proc-tree.js';
import { waitFor } from '../fixtures/wait.js';

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
  const { tree } = await waitFor('two children and a grandchild (or no children lists at all)', () => {
    const seen = childrenTree(root.pid!);
    return seen === undefined || seen.length >= 3 ? { tree: seen } : undefined;
  });
  if (tree === undefined) return t.skip('this kernel keeps no /proc/<pid>/task/<tid>/children lists');
  const table = readProcTable();
  const expected = new Set<number>();
  for (let grew = true; grew;) {
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

test('ProcTreeTracker: an exec forgotten while something still holds its output keeps that holder tracked', async (t) => {
  // The exec (its own group) leaves a setsid child holding its stdout, then exits.
  const marker = `${2000 + Math.floor(Math.random() * 1000)}.${process.pid}`;
  const exec = spawn('sh', ['-c', `setsid sleep ${marker} & sleep 0.2`], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const holders = () => [...readProcTable().values()].filter((e) => e.pid !== exec.pid && readCmdline(e.pid) === `sleep ${marker}`).map((e) => e.pid);
  t.after(() => {
    for (const p of holders()) process.kill(p, 'SIGKILL');
  });
  const tracker = new ProcTreeTracker();
  tracker.addFreshRoot(exec.pid!, childrenTree(exec.pid!) ?? []);
  await new Promise((r) => exec.once('exit', r));
  await waitFor('the setsid child holding its output', () => holders().length > 0);
  assert.equal(holders().length, 1);
  // Its group is gone but its pipes are still held (no end-of-file): forgotten without them.
  tracker.forgetRoot(exec.pid!, false);
  assert.equal(tracker.killSync() >= 1, true);
  await waitFor('the holder killed', () => holders().length === 0);
  assert.deepEqual(holders(), []);
  exec.stdout!.destroy();
  exec.stderr!.destroy();
});

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

test('ProcSnapshots: one read of /proc per turn, shared; a started process makes the next read fresh', async () => {
  const snapshots = new ProcSnapshots();
  const first = snapshots.table();
  assert.equal(snapshots.table(), first, 'the same turn shares one read');
  assert.ok(first.has(process.pid));
  // Which processes hold a pipe: a child's stdout pipe is held by the child (and by this process).
  const child = spawn('sleep', ['30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    await new Promise((r) => child.once('spawn', r));
    const target = stdioTargets(child.pid!)[0]!;
    assert.match(target, /^(pipe|socket):\[\d+\]$/);
    snapshots.invalidate();
    assert.notEqual(snapshots.table(), first, 'invalidated: read again');
    assert.ok(snapshots.table().has(child.pid!));
    assert.ok(snapshots.holders().get(target)?.includes(child.pid!));
    await new Promise((r) => setImmediate(r));
    const next = snapshots.table();
    assert.notEqual(next, first, 'a later turn reads again');
    // A tracker sharing them sees the child by its stdout holder, not only by its group.
    const tracker = new ProcTreeTracker(snapshots);
    tracker.addFreshRoot(child.pid!, []);
    assert.deepEqual(tracker.scan(true), [child.pid!]);
  } finally {
    child.kill('SIGKILL');
  }
});
