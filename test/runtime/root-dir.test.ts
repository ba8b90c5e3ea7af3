// The root dir's safety: pod data never builds a path outside it (metadata.uid "../../victim" is
// refused by validation and, below it, by pathUnder), symlinks planted beneath it are never
// followed when removing or opening logs, and modes do not depend on the umask (a real `run` in a
// child process whose umask is 000).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  UnsafePathError,
  containerLogPath,
  createFileUnderSync,
  ensureDirUnderSync,
  modes,
  openLogFileUnder,
  pathUnder,
  podLogDir,
  removeUnder,
  sandboxDir,
} from '../../src/runtime/root-dir.js';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { ContainerLogFile } from '../../src/runtime/logs/writer.js';
import { readContainerLogEntries } from '../../src/runtime/logs/reader.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

const mainJs = fileURLToPath(new URL('../../src/cli/launch.cjs', import.meta.url));

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-rootdir-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function runCli(args: string[], opts: { umask0?: boolean; cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const pre = opts.umask0 ? ['--import', 'data:text/javascript,process.umask(0)'] : [];
  const child = spawn(process.execPath, [...pre, mainJs, ...args], { stdio: ['ignore', 'pipe', 'pipe'], cwd: opts.cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    }),
  );
}

const podYaml = (uid: string | undefined, command = 'echo hello') => `apiVersion: v1
kind: Pod
metadata:
  name: job
${uid === undefined ? '' : `  uid: ${JSON.stringify(uid)}\n`}spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: [sh, -c, ${JSON.stringify(command)}]
`;

test('pathUnder refuses components that are not one name, and results outside the root', () => {
  const root = '/var/lib/podvisor';
  assert.equal(pathUnder(root, 'sandboxes', 'abc'), '/var/lib/podvisor/sandboxes/abc');
  for (const bad of ['..', '.', '', '../../victim', 'a/b', '/etc', 'x\0y', 'x'.repeat(256)]) {
    assert.throws(() => pathUnder(root, 'sandboxes', bad), UnsafePathError, JSON.stringify(bad));
  }
  assert.throws(() => sandboxDir(root, '../../victim'), UnsafePathError);
  assert.throws(() => podLogDir(root, 'default', 'web', '../../victim'), UnsafePathError);
  assert.throws(() => podLogDir(root, '..', 'web', 'u'), UnsafePathError);
  assert.throws(() => containerLogPath('../x', 0), UnsafePathError);
  assert.throws(() => containerLogPath('c', -1), UnsafePathError);
  assert.equal(containerLogPath('c', 2), 'c/2.log');
  // `..x` is an ordinary name, and `<ns>_<name>_<uid>` stays one component.
  assert.equal(pathUnder(root, '..x'), '/var/lib/podvisor/..x');
});

test('a pod with metadata.uid "../../victim" is rejected before anything starts, and nothing outside the root dir is touched', async (t) => {
  const dir = scratch(t);
  const victim = join(dir, 'victim');
  mkdirSync(victim);
  writeFileSync(join(victim, 'precious'), 'keep me');
  const root = join(dir, 'root', 'a', 'b');
  const pod = join(dir, 'pod.yaml');
  writeFileSync(pod, podYaml('../../victim', 'echo planted > beside; rm -f precious'));
  for (const args of [
    ['validate', '-f', pod],
    ['run', '-f', pod, '--root-dir', root],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /metadata\.uid: Invalid value: "\.\.\/\.\.\/victim": a valid UID must consist of alphanumeric characters/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  assert.equal(readFileSync(join(victim, 'precious'), 'utf8'), 'keep me');
  assert.deepEqual(readdirSync(victim), ['precious']);
});

test('below validation, the process runtime refuses a sandbox or log directory outside the root dir', async (t) => {
  const dir = scratch(t);
  const root = join(dir, 'root');
  const rt = new ProcessRuntime({ rootDir: root, clock: new RealClock(), logger: silentLogger });
  const config = (uid: string, logDirectory: string) => ({
    metadata: { name: 'p', namespace: 'default', uid, attempt: 0 },
    hostname: 'p',
    logDirectory,
    labels: {},
    annotations: {},
    portMappings: [],
  });
  await assert.rejects(rt.runPodSandbox(config('../../victim', join(root, 'pods', 'x'))), UnsafePathError);
  await assert.rejects(rt.runPodSandbox(config('ok', join(dir, 'elsewhere'))), UnsafePathError);
  assert.equal(existsSync(join(dir, 'elsewhere')), false);
  assert.equal(existsSync(join(dir, 'victim')), false);
});

test('removing a pod directory never follows a symlink planted under the root dir', async (t) => {
  const dir = scratch(t);
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'precious'), 'keep me');
  mkdirSync(root);
  // The parent of the pod directory is a symlink out of the root dir: refused.
  symlinkSync(outside, join(root, 'sandboxes'));
  mkdirSync(join(outside, 'uid1'));
  await assert.rejects(removeUnder(root, sandboxDir(root, 'uid1')), UnsafePathError);
  assert.ok(existsSync(join(outside, 'uid1')));
  rmSync(join(root, 'sandboxes'));
  // A symlink inside the removed directory is unlinked, its target kept.
  ensureDirUnderSync(root, sandboxDir(root, 'uid2'), modes.private);
  symlinkSync(outside, join(sandboxDir(root, 'uid2'), 'link'));
  await removeUnder(root, sandboxDir(root, 'uid2'));
  assert.equal(existsSync(sandboxDir(root, 'uid2')), false);
  assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'keep me');
  // The pod directory itself a symlink: the link is removed, not what it points to.
  symlinkSync(outside, join(root, 'sandboxes', 'uid3'));
  await removeUnder(root, sandboxDir(root, 'uid3'));
  assert.equal(existsSync(join(root, 'sandboxes', 'uid3')), false);
  assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'keep me');
});

test('log files are never opened through a planted symlink, for writing or reading', async (t) => {
  const dir = scratch(t);
  const root = join(dir, 'root');
  const target = join(dir, 'target');
  writeFileSync(target, 'untouched\n');
  const logDir = podLogDir(root, 'default', 'p', 'u1');
  ensureDirUnderSync(root, join(logDir, 'c'), modes.logDir);
  const log = join(logDir, containerLogPath('c', 0));
  symlinkSync(target, log);
  await assert.rejects(ContainerLogFile.open({ path: log, now: () => Date.now(), logger: silentLogger }), UnsafePathError);
  await assert.rejects(openLogFileUnder(root, log), UnsafePathError);
  await assert.rejects(readContainerLogEntries(log), /ELOOP/);
  assert.equal(readFileSync(target, 'utf8'), 'untouched\n');
  // A symlinked directory on the way is refused too.
  symlinkSync(dir, join(logDir, 'd'));
  await assert.rejects(openLogFileUnder(root, join(logDir, 'd', '0.log')), UnsafePathError);
  assert.equal(existsSync(join(dir, '0.log')), false);
});

test('the synchronous directory and file creation refuse a planted symlink, create with the modes asked for, and empty an existing file', (t) => {
  const dir = scratch(t);
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  ensureDirUnderSync(root, join(root, 'sandboxes', 'u1', 'containers'), modes.private);
  assert.equal(statSync(root).mode & 0o777, modes.private);
  assert.equal(statSync(join(root, 'sandboxes', 'u1', 'containers')).mode & 0o777, modes.private);
  // A directory on the way that is a symlink out of the root dir: refused, nothing made beyond it.
  symlinkSync(outside, join(root, 'sandboxes', 'u2'));
  assert.throws(() => ensureDirUnderSync(root, join(root, 'sandboxes', 'u2', 'containers'), modes.private), UnsafePathError);
  assert.throws(() => createFileUnderSync(root, join(root, 'sandboxes', 'u2', 'msg'), modes.private, 0o600), UnsafePathError);
  assert.deepEqual(readdirSync(outside), []);
  // The file itself a symlink: refused, its target untouched.
  const target = join(outside, 'target');
  writeFileSync(target, 'untouched');
  const file = join(root, 'sandboxes', 'u1', 'containers', 'c', '0');
  ensureDirUnderSync(root, join(root, 'sandboxes', 'u1', 'containers', 'c'), modes.private);
  symlinkSync(target, file);
  assert.throws(() => createFileUnderSync(root, file, modes.private, 0o600), UnsafePathError);
  assert.equal(readFileSync(target, 'utf8'), 'untouched');
  rmSync(file);
  // A file made anew, then emptied when made again.
  createFileUnderSync(root, file, modes.private, 0o600);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  writeFileSync(file, 'last message');
  createFileUnderSync(root, file, modes.private, 0o600);
  assert.equal(readFileSync(file, 'utf8'), '');
});

test('with umask 000, a real run creates the root dir and sandboxes 0700, the log tree 0755 and log files 0640', async (t) => {
  const dir = scratch(t);
  const root = join(dir, 'state', 'podvisor');
  const pod = join(dir, 'pod.yaml');
  writeFileSync(pod, podYaml(undefined));
  const r = await runCli(['run', '-f', pod, '--root-dir', root], { umask0: true });
  assert.equal(r.code, 0, r.stderr);
  const mode = (p: string) => statSync(p).mode & 0o777;
  assert.equal(mode(root), 0o700);
  assert.equal(mode(join(root, 'sandboxes')), 0o700);
  const [uid] = readdirSync(join(root, 'sandboxes'));
  assert.ok(uid);
  assert.equal(mode(join(root, 'sandboxes', uid)), 0o700);
  assert.equal(mode(join(root, 'pods')), 0o755);
  const podDir = join(root, 'pods', `default_job_${uid}`);
  assert.equal(mode(podDir), 0o755);
  assert.equal(mode(join(podDir, 'c')), 0o755);
  assert.equal(mode(join(podDir, 'c', '0.log')), 0o640);
  assert.ok(lstatSync(join(podDir, 'c', '0.log')).isFile());
  assert.match(readFileSync(join(podDir, 'c', '0.log'), 'utf8'), /stdout F hello/);
});
