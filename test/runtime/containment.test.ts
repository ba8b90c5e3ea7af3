// Processes that try to escape their container: children that setsid (from the container and from an
// exec probe), a 200-fork probe bounded by the pod's pids limit, a memory limit reported OOMKilled, and
// runAsUser — with cgroups (as root) and with the /proc fallback. Leftovers are looked for in /proc.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chownSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { randomInt } from 'node:crypto';
import { ProcessRuntime, type ProcessRuntimeOptions } from '../../src/runtime/process/runtime.js';
import { detectCgroupLayout } from '../../src/runtime/process/cgroup.js';
import { parseStat } from '../../src/runtime/process/proc-tree.js';
import { resolveIdentity } from '../../src/runtime/process/identity.js';
import { sandboxDir } from '../../src/runtime/root-dir.js';
import type { ContainerConfig } from '../../src/runtime/cri.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { containerConfig, sandboxConfig, tempDir, waitFor } from './helpers.js';

const isRoot = process.getuid?.() === 0;
const cgroupsUsable = isRoot && detectCgroupLayout() !== undefined;

/** Pids of live (non-zombie) processes whose command line contains marker. */
function withMarker(marker: string): number[] {
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (!readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(marker)) continue;
      if (parseStat(readFileSync(`/proc/${n}/stat`, 'utf8'))?.state === 'Z') continue;
      out.push(Number(n));
    } catch {
      // gone
    }
  }
  return out;
}

/** A sleep duration nobody else uses, as the marker of this test's processes. */
const marker = () => `${randomInt(100_000, 999_999)}.${randomInt(1000, 9999)}`;

async function withRuntime(opts: Partial<ProcessRuntimeOptions>, fn: (rt: ProcessRuntime, root: string) => Promise<void>) {
  const { dir, cleanup } = tempDir();
  const rt = new ProcessRuntime({ rootDir: dir, clock: new RealClock(), logger: silentLogger, ...opts });
  try {
    await fn(rt, dir);
  } finally {
    await rt.close();
    cleanup();
  }
}

async function startContainer(rt: ProcessRuntime, root: string, command: string[], over: Partial<ContainerConfig> = {}) {
  const sbc = sandboxConfig(root);
  const sb = await rt.runPodSandbox(sbc);
  const id = await rt.createContainer(sb, containerConfig(command, over), sbc);
  await rt.startContainer(id);
  return { sb, id };
}

const modes: Array<{ name: string; opts: Partial<ProcessRuntimeOptions>; skip: string | false }> = [
  { name: 'cgroups', opts: { cgroups: 'auto' }, skip: cgroupsUsable ? false : 'needs root and a cgroup hierarchy' },
  { name: '/proc tree', opts: { cgroups: false }, skip: false },
];

for (const mode of modes) {
  test(`${mode.name}: children that setsid away from the container and from an exec die with the container`, { skip: mode.skip }, async () => {
    const m = marker();
    await withRuntime(mode.opts, async (rt, root) => {
      const script = `setsid sleep ${m} & setsid sh -c 'sleep ${m} & sleep ${m}' >/dev/null 2>&1 & exec sleep ${m}`;
      const { sb, id } = await startContainer(rt, root, ['sh', '-c', script]);
      await waitFor('the container and its setsid children', () => withMarker(m).length >= 4);
      // An exec probe whose child setsids and outlives the exec. The exec's shell lives a moment after
      // the fork: a child orphaned within the instant before the runtime registers a fresh exec can
      // still escape (processes join their cgroup just after spawn; see docs/security.md).
      const r = await rt.execSync(id, ['sh', '-c', `setsid sleep ${m} & sleep 0.3`], 10);
      assert.equal(r.exitCode, 0);
      await waitFor('the exec child', () => withMarker(m).length >= 5);
      assert.equal(rt.enforcesLimits, mode.name === 'cgroups');
      await rt.stopContainer(id, 5);
      assert.deepEqual(withMarker(m), []);
      await rt.removePodSandbox(sb);
    });
  });

  test(
    `${mode.name}: a probe forking 200 processes is ${mode.name === 'cgroups' ? 'bounded by the pod pids limit and ' : ''}fully cleaned`,
    { skip: mode.skip },
    async () => {
      const m = marker();
      await withRuntime({ ...mode.opts, podPidsLimit: 40 }, async (rt, root) => {
        const { id } = await startContainer(rt, root, ['sleep', m]);
        // The probe first lets its move into the cgroup happen: what a process forks in the instant before
        // it joins is not counted (docs/security.md); the bound holds from then on.
        const probe = `sleep 1; i=0; while [ $i -lt 200 ]; do sleep ${m} 2>/dev/null & i=$((i+1)); done; exit 0`;
        const r = await rt.execSync(id, ['sh', '-c', probe], 30);
        assert.equal(r.timedOut, false);
        const running = withMarker(m).length;
        if (mode.name === 'cgroups') assert.ok(running <= 40, `${running} processes under a pids limit of 40`);
        else assert.ok(running > 40, `${running} processes without a pids limit`);
        await rt.stopContainer(id, 5);
        assert.deepEqual(withMarker(m), []);
      });
    },
  );
}

test(
  'cgroups: a child that setsids and is orphaned in the first instant of a container or an exec probe dies with it',
  { skip: cgroupsUsable ? false : 'needs root and a cgroup hierarchy' },
  async () => {
    const m = marker();
    await withRuntime({ cgroups: 'auto' }, async (rt, root) => {
      // The shell forks, the child leaves group and session at once, the shell exits: nothing of the
      // container remains to be found but what its cgroup holds.
      for (let round = 0; round < 10; round++) {
        const sbc = sandboxConfig(root, `instant${round}`);
        const sb = await rt.runPodSandbox(sbc);
        const id = await rt.createContainer(sb, containerConfig(['sh', '-c', `setsid sleep ${m} >/dev/null 2>&1 & true`]), sbc);
        await rt.startContainer(id);
        await waitFor('the container to exit', async () => (await rt.containerStatus(id)).state === 'CONTAINER_EXITED');
        assert.deepEqual(withMarker(m), [], `round ${round}: the container's setsid child survived it`);
        await rt.removePodSandbox(sb);
      }
      const { id } = await startContainer(rt, root, ['sleep', m]);
      for (let round = 0; round < 10; round++) {
        const r = await rt.execSync(id, ['sh', '-c', `setsid sleep ${m}.1 >/dev/null 2>&1 & true`], 10);
        assert.equal(r.exitCode, 0);
      }
      await rt.stopContainer(id, 5);
      assert.deepEqual(withMarker(m), [], "an exec probe's setsid child survived the container");
    });
  },
);

test('a 64Mi memory limit is enforced: exit 137, reason OOMKilled', { skip: cgroupsUsable ? false : 'needs root and a cgroup hierarchy' }, async () => {
  await withRuntime({}, async (rt, root) => {
    const hog = 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));';
    const { id } = await startContainer(rt, root, [process.execPath, '-e', hog], {
      linux: { resources: { memoryLimitInBytes: 64 * 1024 * 1024, cpuPeriod: 0, cpuQuota: 0, cpuShares: 2, oomScoreAdj: 0 } },
    });
    const s = await waitFor('the OOM kill', async () => {
      const st = await rt.containerStatus(id);
      return st.state === 'CONTAINER_EXITED' ? st : undefined;
    });
    assert.equal(s.exitCode, 137);
    assert.equal(s.reason, 'OOMKilled');
  });
});

test('without the limit, the same container is not OOMKilled (a plain exit is Completed)', { skip: cgroupsUsable ? false : 'needs root' }, async () => {
  await withRuntime({}, async (rt, root) => {
    const { id } = await startContainer(rt, root, [process.execPath, '-e', 'Buffer.alloc(80 << 20, 1)']);
    const s = await waitFor('exit', async () => {
      const st = await rt.containerStatus(id);
      return st.state === 'CONTAINER_EXITED' ? st : undefined;
    });
    assert.equal(s.exitCode, 0);
    assert.equal(s.reason, 'Completed');
  });
});

test('runAsUser/runAsGroup/supplementalGroups as root: the container and its execs run as that user', { skip: isRoot ? false : 'needs root' }, async () => {
  await withRuntime({}, async (rt, root) => {
    const { id } = await startContainer(rt, root, ['sh', '-c', 'echo "$(id -u) $(id -g) $(id -G) $HOME"; exec sleep 60'], {
      workingDir: '/',
      linux: { securityContext: { runAsUser: 65534, runAsGroup: 65534, supplementalGroups: [4242] } },
    });
    const logPath = (await rt.containerStatus(id)).logPath;
    const line = await waitFor('the id line', () => {
      try {
        return readFileSync(logPath, 'utf8').split('\n')[0]?.split(' ').slice(3).join(' ');
      } catch {
        return undefined;
      }
    });
    const [uid, gid, ...rest] = line.split(' ');
    assert.equal(uid, '65534');
    assert.equal(gid, '65534');
    assert.ok(rest.includes('4242'), line);
    assert.equal(rest.at(-1), readFileSync('/etc/passwd', 'utf8').match(/^[^:]*:[^:]*:65534:[^:]*:[^:]*:([^:]*):/m)?.[1] ?? '/');
    const r = await rt.execSync(id, ['id', '-u'], 10);
    assert.equal(r.stdout.toString().trim(), '65534');
    await rt.stopContainer(id, 5);
  });
});

test('runAsUser as root without supplementary groups: spawn uid/gid', { skip: isRoot ? false : 'needs root' }, async () => {
  await withRuntime({}, async (rt, root) => {
    const { id } = await startContainer(rt, root, ['sh', '-c', 'id -u; id -G'], { workingDir: '/', linux: { securityContext: { runAsUser: 65534 } } });
    await waitFor('exit', async () => (await rt.containerStatus(id)).state === 'CONTAINER_EXITED');
    const lines = readFileSync((await rt.containerStatus(id)).logPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ').slice(3).join(' '));
    // The primary group is the user's passwd group, and no group of the agent is kept.
    assert.deepEqual(lines, ['65534', '65534']);
  });
});

test(
  'runAsUser as root without workingDir: it starts in /, a directory its user can enter, as docs/security.md says',
  { skip: isRoot ? false : 'needs root' },
  async () => {
    await withRuntime({}, async (rt, root) => {
      const sbc = sandboxConfig(root);
      const sb = await rt.runPodSandbox(sbc);
      const script = 'id -u; pwd; ls -d . >/dev/null && echo listed';
      const id = await rt.createContainer(sb, containerConfig(['sh', '-c', script], { linux: { securityContext: { runAsUser: 65534 } } }), sbc);
      await rt.startContainer(id);
      await waitFor('exit', async () => (await rt.containerStatus(id)).state === 'CONTAINER_EXITED');
      const st = await rt.containerStatus(id);
      const lines = readFileSync(st.logPath, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ').slice(3).join(' '));
      assert.deepEqual([st.exitCode, ...lines], [0, '65534', '/', 'listed']);
      // The agent's own user keeps the sandbox directory as its default.
      const own = await rt.createContainer(sb, containerConfig(['pwd'], { metadata: { name: 'own', attempt: 0 } }), sbc);
      await rt.startContainer(own);
      await waitFor('exit', async () => (await rt.containerStatus(own)).state === 'CONTAINER_EXITED');
      const ownDir = readFileSync((await rt.containerStatus(own)).logPath, 'utf8')
        .trim()
        .split(' ')
        .slice(3)
        .join(' ');
      assert.equal(ownDir, sandboxDir(root, sbc.metadata.uid));
    });
  },
);

test('not root: runAsUser, runAsGroup and supplementalGroups are reported as not honoured', () => {
  const id = resolveIdentity({ runAsUser: 65534, runAsGroup: 65534, supplementalGroups: [1] }, { uid: 1000, gid: 1000 }, []);
  assert.equal(id.uid, undefined);
  assert.deepEqual(
    id.unhonoured.map((u) => u.field),
    ['runAsUser', 'runAsGroup', 'supplementalGroups'],
  );
  assert.equal(id.home, '/');
  // Asking for the agent's own user is honoured.
  assert.deepEqual(resolveIdentity({ runAsUser: 1000 }, { uid: 1000, gid: 1000 }, []).unhonoured, []);
});

/**
 * What of `files` (the built runtime and the packages it loads) user nobody cannot reach: the first
 * directory on the way it may not enter, a file it may not read, or node itself; undefined when it
 * can read them all. Asked of a process running as nobody, so permissions and ACLs count as they will.
 */
async function whatNobodyCannotRead(files: string[]): Promise<string | undefined> {
  const probe = `
    const { accessSync, constants } = require('node:fs');
    const { dirname } = require('node:path');
    for (const file of ${JSON.stringify(files)}) {
      const dirs = [];
      for (let d = dirname(file); ; d = dirname(d)) { dirs.unshift(d); if (d === dirname(d)) break; }
      for (const d of dirs) {
        try { accessSync(d, constants.X_OK); } catch { console.log('user nobody cannot enter ' + d); process.exit(3); }
      }
      try { accessSync(file, constants.R_OK); } catch { console.log('user nobody cannot read ' + file); process.exit(3); }
    }`;
  const child = spawn(process.execPath, ['-e', probe], { uid: 65534, gid: 65534, cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | string>((r) => {
    child.once('error', (err: NodeJS.ErrnoException) => r(err.code ?? 'error'));
    child.once('close', (c) => r(c ?? 'signal'));
  });
  if (code === 0) return undefined;
  if (code === 3) return out.trim();
  return `user nobody cannot run ${process.execPath} (${code})`;
}

test(
  'not root, for real: a runtime started as nobody falls back to the /proc tree and reports the limits it cannot enforce',
  { skip: isRoot ? false : 'needs root to become nobody' },
  async (t) => {
    const rtUrl = new URL('../../src/runtime/process/runtime.js', import.meta.url).href;
    const unreadable = await whatNobodyCannotRead([fileURLToPath(rtUrl), realpathSync(createRequire(import.meta.url).resolve('@grpc/grpc-js'))]);
    if (unreadable) {
      t.skip(`${unreadable}, where the built runtime is: put the clone where nobody can read it to run this test`);
      return;
    }
    const { dir, cleanup } = tempDir();
    chownSync(dir, 65534, 65534);
    try {
      const script = `
      import { ProcessRuntime } from ${JSON.stringify(rtUrl)};
      import { RealClock } from ${JSON.stringify(new URL('../../src/util/clock.js', import.meta.url).href)};
      const seen = [];
      const rt = new ProcessRuntime({ rootDir: ${JSON.stringify(dir)}, clock: new RealClock(), logger: { debug() {}, info() {}, warn() {}, error() {} },
        onUnhonoured: (_l, field, why) => seen.push(field + ': ' + why) });
      const sbc = { metadata: { name: 'p', namespace: 'default', uid: 'u', attempt: 0 }, hostname: 'p', logDirectory: '', labels: {}, annotations: {}, portMappings: [] };
      const sb = await rt.runPodSandbox(sbc);
      await rt.createContainer(sb, { metadata: { name: 'c', attempt: 0 }, image: '', command: ['true'], args: [], workingDir: '/', envs: [], logPath: '', labels: {}, annotations: {},
        linux: { resources: { memoryLimitInBytes: 67108864, cpuQuota: 50000, cpuPeriod: 100000, cpuShares: 2, oomScoreAdj: 0 }, securityContext: { runAsUser: 0 } } }, sbc);
      console.log(JSON.stringify({ enforces: rt.enforcesLimits, seen }));
      await rt.close();`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { uid: 65534, gid: 65534, cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('close', r));
      assert.equal(code, 0, out);
      const res = JSON.parse(out) as { enforces: boolean; seen: string[] };
      assert.equal(res.enforces, false);
      assert.deepEqual(res.seen, [
        'runAsUser: podvisor is not running as root',
        'resources.limits.memory: no writable cgroup hierarchy (podvisor is not root, or cgroups are read-only)',
        'resources.limits.cpu: no writable cgroup hierarchy (podvisor is not root, or cgroups are read-only)',
      ]);
    } finally {
      cleanup();
    }
  },
);

test('cgroup layout detection: v2 with the controllers, else the v1 mounts', () => {
  const v1 = [
    '30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
    '31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
    '32 25 0:28 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  ].join('\n');
  assert.deepEqual(detectCgroupLayout(v1), { version: 1, memory: '/sys/fs/cgroup/memory', cpu: '/sys/fs/cgroup/cpu,cpuacct', pids: '/sys/fs/cgroup/pids' });
  assert.equal(detectCgroupLayout(v1.split('\n').slice(0, 2).join('\n')), undefined);
  assert.equal(detectCgroupLayout(''), undefined);
});
