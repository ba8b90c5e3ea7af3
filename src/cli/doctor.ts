// `podvisor doctor`: checks the host for the runtime the agent would use — for containerd its socket
// and CRI plugin, runc, the CNI plugins, the sandbox (pause) image, restrict_oom_score_adj where root
// lacks CAP_SYS_RESOURCE; for both the cgroup version and the root dir — and prints what is missing
// with how to fix it (as `flutter doctor` or `brew doctor` do); exit 1 when anything is.

import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defineCommand, type CommandIO } from './args.js';
import { agentFlagSpecs, agentSettings } from './agent-flags.js';
import { streamLogger } from '../util/logger.js';
import { setLongTimeout, type LongTimer } from '../util/timer.js';
import type { ImageService } from '../runtime/cri.js';

type Verdict = 'ok' | 'warn' | 'fail';

export interface Check {
  verdict: Verdict;
  what: string;
  /** How to fix it (fail or warn). */
  fix?: string;
}

const CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'];
const CNI_BIN_DIRS = ['/opt/cni/bin', '/usr/lib/cni'];
/** CAP_SYS_RESOURCE's bit in a capability mask. */
const CAP_SYS_RESOURCE = 24n;

function onPath(cmd: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = join(dir, cmd);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** cgroup v2 (unified) or v1/hybrid, from /sys/fs/cgroup. */
export function cgroupCheck(root = '/sys/fs/cgroup'): Check {
  if (existsSync(join(root, 'cgroup.controllers'))) return { verdict: 'ok', what: 'cgroup v2 (unified hierarchy)' };
  if (existsSync(join(root, 'memory'))) {
    return {
      verdict: 'warn',
      what: 'cgroup v1 (or hybrid): runc and containerd work; crun refuses a hybrid hierarchy',
      fix: 'boot with systemd.unified_cgroup_hierarchy=1 for cgroup v2, or keep runc as the runtime',
    };
  }
  return { verdict: 'fail', what: `no cgroup hierarchy at ${root}`, fix: 'mount cgroup2 on /sys/fs/cgroup (mount -t cgroup2 none /sys/fs/cgroup)' };
}

/** The root dir exists (or can be made) and is writable. */
export function rootDirCheck(dir: string): Check {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return { verdict: 'ok', what: `root dir ${dir} is writable` };
  } catch (err) {
    return {
      verdict: 'fail',
      what: `root dir ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      fix: 'give --root-dir a directory you can write',
    };
  }
}

/** Whether this process's bounding set holds CAP_SYS_RESOURCE (needed for a negative oom_score_adj). */
function hasSysResource(): boolean {
  const m = /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return !m || ((BigInt(`0x${m[1]}`) >> CAP_SYS_RESOURCE) & 1n) === 1n;
}

interface CriConfig {
  sandboxImage?: string;
  restrictOOMScoreAdj?: boolean;
  cni?: { pluginDirs?: string[]; binDir?: string; pluginConfDir?: string; confDir?: string };
}

const PULL_CHECK_MS = 30_000;

/** true once image is pulled, or why not (the error's first line, or the time it took too long). */
async function pullWithin(images: ImageService, image: string, ms: number): Promise<true | string> {
  let timer: LongTimer | undefined;
  const late = new Promise<string>((r) => (timer = setLongTimeout(() => r(`no answer within ${ms / 1000}s`), ms)));
  try {
    return await Promise.race([
      images.pullImage({ image }).then(
        () => true as const,
        (err: Error) => err.message.split('\n')[0]!,
      ),
      late,
    ]);
  } finally {
    timer?.cancel();
  }
}

/** The containerd checks, through its CRI socket. */
export async function containerdChecks(endpoint: string, env: NodeJS.ProcessEnv, io: Pick<CommandIO, 'stderr'>): Promise<Check[]> {
  const out: Check[] = [];
  const sock = endpoint.replace(/^unix:\/\//, '');
  const start = `start containerd (containerd --config /etc/containerd/config.toml, or systemctl start containerd), or give --container-runtime-endpoint`;
  if (!existsSync(sock)) return [{ verdict: 'fail', what: `containerd socket ${sock} does not exist`, fix: start }];
  if (!statSync(sock).isSocket()) return [{ verdict: 'fail', what: `${sock} is not a socket`, fix: start }];
  try {
    accessSync(sock, constants.R_OK | constants.W_OK);
  } catch {
    return [{ verdict: 'fail', what: `no permission on ${sock}`, fix: 'run as root (containerd serves its socket to root only)' }];
  }
  const { CriRuntimeClient } = await import('../runtime/cri/client.js');
  const client = new CriRuntimeClient({ endpoint, logger: streamLogger(io.stderr, 'error'), requestTimeoutMs: 10_000 });
  try {
    let config: CriConfig = {};
    try {
      const v = await client.version();
      out.push({ verdict: 'ok', what: `containerd answers on ${endpoint} (${v.runtimeName} ${v.runtimeVersion}, CRI ${v.runtimeApiVersion})` });
      config = JSON.parse((await client.statusInfo()).config ?? '{}') as CriConfig;
    } catch (err) {
      out.push({
        verdict: 'fail',
        what: `containerd on ${endpoint} does not serve the CRI: ${(err as Error).message.split('\n')[0]}`,
        fix: 'enable the CRI plugin: "cri" must not be in disabled_plugins of its config.toml',
      });
      return out;
    }
    const runc = onPath('runc', env);
    out.push(runc ? { verdict: 'ok', what: `runc at ${runc}` } : { verdict: 'fail', what: 'runc is not on PATH', fix: 'apt-get install runc' });

    const binDirs = config.cni?.pluginDirs ?? (config.cni?.binDir ? [config.cni.binDir] : CNI_BIN_DIRS);
    const missing = CNI_PLUGINS.filter((p) => !binDirs.some((d) => existsSync(join(d, p))));
    if (!missing.length) out.push({ verdict: 'ok', what: `CNI plugins ${CNI_PLUGINS.join(', ')} in ${binDirs.join(':')}` });
    else {
      const elsewhere = CNI_BIN_DIRS.find((d) => !binDirs.includes(d) && missing.every((p) => existsSync(join(d, p))));
      out.push({
        verdict: 'fail',
        what: `CNI plugins missing from ${binDirs.join(':')}: ${missing.join(', ')}`,
        fix: elsewhere
          ? `they are in ${elsewhere}: set bin_dir = "${elsewhere}" under [plugins."io.containerd.grpc.v1.cri".cni] in containerd's config.toml`
          : 'apt-get install containernetworking-plugins, then set bin_dir = "/usr/lib/cni" under [plugins."io.containerd.grpc.v1.cri".cni]',
      });
    }

    const pause = config.sandboxImage;
    if (pause) {
      const present = (await client.images.imageStatus({ image: pause }).catch(() => null)) !== null;
      // Absent: pulled now, as the first sandbox would pull it (bounded: an unreachable registry may hang).
      const pulled = present ? undefined : await pullWithin(client.images, pause, PULL_CHECK_MS);
      out.push(
        present || pulled === true
          ? { verdict: 'ok', what: `sandbox (pause) image ${pause} is ${present ? 'present' : 'pulled'}` }
          : {
              verdict: 'fail',
              what: `sandbox (pause) image ${pause} is not in containerd's image store and cannot be pulled: ${pulled}`,
              fix:
                'push a pause image to a local registry (docker-registry on 127.0.0.1:5000; skopeo copy oci:DIR:pause docker://127.0.0.1:5000/pause:3.9 --dest-tls-verify=false) ' +
                'and set sandbox_image = "127.0.0.1:5000/pause:3.9" under [plugins."io.containerd.grpc.v1.cri"], or ctr -n k8s.io images import pause.tar',
            },
      );
    }
    if (!hasSysResource() && config.restrictOOMScoreAdj !== true) {
      out.push({
        verdict: 'fail',
        what: 'root lacks CAP_SYS_RESOURCE and containerd does not restrict oom_score_adj: every sandbox fails (oom_score_adj: Permission denied)',
        fix: 'set restrict_oom_score_adj = true under [plugins."io.containerd.grpc.v1.cri"] in its config.toml',
      });
    }
    try {
      for (const c of await client.status()) {
        if (c.status) out.push({ verdict: 'ok', what: `containerd ${c.type}` });
        else
          out.push({
            verdict: c.type === 'NetworkReady' ? 'warn' : 'fail',
            what: `containerd ${c.type} is false: ${c.reason} ${c.message}`.trim(),
            ...(c.type === 'NetworkReady' ? { fix: 'podvisor agent --runtime=containerd writes the pod network config into --cni-conf-dir on start' } : {}),
          });
      }
    } catch {
      // the conditions are extra: the version call already showed the CRI answers
    }
  } finally {
    await client.close();
  }
  return out;
}

const mark: Record<Verdict, string> = { ok: '[ok]  ', warn: '[warn]', fail: '[FAIL]' };

/** The checks as lines: a mark, what was found, and the fix under it. */
export function formatChecks(checks: readonly Check[]): string {
  return checks.map((c) => `${mark[c.verdict]} ${c.what}\n${c.fix && c.verdict !== 'ok' ? `       fix: ${c.fix}\n` : ''}`).join('');
}

export const doctorCommand = defineCommand({
  name: 'doctor',
  summary: 'Check the host for the container runtime: what is missing and how to fix it',
  usage: 'podvisor doctor [--runtime=process|containerd] [--container-runtime-endpoint ENDPOINT] [--root-dir DIR]',
  description:
    'Check what the agent needs on this host and print, for each thing, [ok], [warn] or [FAIL] with how to\n' +
    'fix it. For --runtime=containerd: the socket answers the CRI, runc, the CNI plugins, the sandbox\n' +
    '(pause) image in its store (pulled now when absent, as the first sandbox would pull it),\n' +
    'restrict_oom_score_adj where root lacks CAP_SYS_RESOURCE, its runtime\n' +
    'and network conditions. For both runtimes: the cgroup hierarchy and the root dir.\n\n' +
    'Exit status: 0 when nothing failed (warnings allowed), 1 otherwise.',
  examples: ['podvisor doctor --runtime=containerd', 'podvisor doctor --runtime=containerd --container-runtime-endpoint unix:///tmp/ctrd/containerd.sock'],
  flags: agentFlagSpecs.filter((f) => ['runtime', 'container-runtime-endpoint', 'root-dir'].includes(f.name)),
  async run(parsed, io) {
    const settings = agentSettings(parsed, io);
    const checks: Check[] = [];
    if (settings.runtime === 'containerd') checks.push(...(await containerdChecks(settings.runtimeEndpoint, io.env, io)));
    checks.push(cgroupCheck(), rootDirCheck(settings.rootDir));
    io.stdout.write(formatChecks(checks));
    const failed = checks.filter((c) => c.verdict === 'fail').length;
    io.stdout.write(failed ? `${failed} problem${failed === 1 ? '' : 's'} found\n` : 'no problems found\n');
    return failed ? 1 : 0;
  },
});
