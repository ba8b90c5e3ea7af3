// `podvisor doctor`: checks the host for the runtime the agent would use — for the containerd podvisor
// starts (--runtime=containerd without an endpoint) the host's binaries by package, then that
// containerd started with its config and asked as below; for a containerd at an endpoint its socket
// and CRI plugin, runc, the CNI plugins, the sandbox (pause) image, restrict_oom_score_adj where root
// lacks CAP_SYS_RESOURCE; for both runtimes the cgroup version and the root dir — and prints what is
// missing with how to fix it (as `flutter doctor` or `brew doctor` do); exit 1 when anything is.

import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defineCommand, type CommandIO } from './args.js';
import { agentFlagSpecs, agentSettings } from './agent-flags.js';
import { streamLogger } from '../util/logger.js';
import { setLongTimeout, type LongTimer } from '../util/timer.js';
import type { ImageService } from '../runtime/cri.js';
import type { ManagedContainerdSettings } from '../runtime/containerd/managed.js';
import { CNI_BIN_DIRS, cniBinDir, hasSysResource, managedContainerdProblems, onPath } from '../runtime/containerd/host.js';
import type { AgentSettings } from '../agent/settings.js';

type Verdict = 'ok' | 'warn' | 'fail';

export interface Check {
  verdict: Verdict;
  what: string;
  /** How to fix it (fail or warn). */
  fix?: string;
}

const CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'];

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

/** How to fix a sandbox image that is neither present nor pullable. */
function sandboxImageFix(managed: ManagedContainerdSettings | undefined): string {
  if (managed) {
    return (
      'load a pause image and name it: podvisor image load -i pause.tar, then --pod-infra-container-image=<its name>; ' +
      'or push one to a local registry (docker-registry on 127.0.0.1:5000) and give --pod-infra-container-image=127.0.0.1:5000/pause:3.9'
    );
  }
  return (
    'push a pause image to a local registry (docker-registry on 127.0.0.1:5000; skopeo copy oci:DIR:pause docker://127.0.0.1:5000/pause:3.9 --dest-tls-verify=false) ' +
    'and set sandbox_image = "127.0.0.1:5000/pause:3.9" under [plugins."io.containerd.grpc.v1.cri"], or ctr -n k8s.io images import pause.tar'
  );
}

/** The containerd checks, through its CRI socket (managed: the containerd podvisor runs for the root dir). */
export async function containerdChecks(
  endpoint: string,
  env: NodeJS.ProcessEnv,
  io: Pick<CommandIO, 'stderr'>,
  managed?: ManagedContainerdSettings,
): Promise<Check[]> {
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
              fix: sandboxImageFix(managed),
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

/**
 * The containerd podvisor runs for the root dir: the host's binaries (each missing one named with its
 * package), then that containerd — started for the check when it does not run, and stopped again —
 * asked as any containerd is.
 */
export async function managedContainerdChecks(settings: AgentSettings, io: Pick<CommandIO, 'stderr' | 'env'>): Promise<Check[]> {
  const managed = settings.managedContainerd!;
  const m = await import('../runtime/containerd/managed.js');
  const problems = managedContainerdProblems(io.env);
  if (problems.length) return problems.map((p) => ({ verdict: 'fail', what: p.what, fix: p.fix }));
  const out: Check[] = [
    { verdict: 'ok', what: `containerd at ${onPath('containerd', io.env)}, runc at ${onPath('runc', io.env)}, CNI plugins in ${cniBinDir()}` },
  ];
  if (!hasSysResource()) out.push({ verdict: 'ok', what: 'root lacks CAP_SYS_RESOURCE: the config podvisor writes sets restrict_oom_score_adj = true' });
  const { managedContainerdLayout } = await import('../runtime/containerd/config.js');
  const layout = managedContainerdLayout(settings.rootDir);
  const logger = streamLogger(io.stderr, 'error');
  let started: number | undefined;
  try {
    const { writePodNetworkConfig, bridgeName, defaultPodCIDR } = await import('../runtime/cni-config.js');
    await writePodNetworkConfig(settings.cniConfDir ?? layout.cniConfDir, {
      podCIDR: settings.podCIDR ?? defaultPodCIDR(settings.rootDir),
      bridge: bridgeName(settings.rootDir),
    });
    const { client, startedPid } = await m.connectManagedContainerd(managed, { logger });
    await client.close();
    started = startedPid;
    out.push({
      verdict: 'ok',
      what: started
        ? `containerd starts with the config podvisor writes (${layout.config}); log ${layout.log}`
        : `containerd of the root dir runs (pid ${m.managedContainerdPid(layout) ?? '?'}) with ${layout.config}`,
    });
  } catch (err) {
    out.push({ verdict: 'fail', what: `containerd does not start with ${layout.config}: ${(err as Error).message}`, fix: `see its log, ${layout.log}` });
    return out;
  }
  try {
    out.push(...(await containerdChecks(settings.runtimeEndpoint, io.env, io, managed)).filter((c) => !/^runc at |^CNI plugins /.test(c.what)));
  } finally {
    if (started) await m.stopIdleManagedContainerd(settings.rootDir, logger);
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
    'fix it. For --runtime=containerd without --container-runtime-endpoint (the containerd podvisor starts):\n' +
    'containerd, runc and the CNI plugins on the host (naming the package of each one missing), then that\n' +
    'containerd started with its config (and stopped again if it was not running) and checked as follows.\n' +
    'For a containerd at --container-runtime-endpoint: the socket answers the CRI, runc, the CNI plugins, the sandbox\n' +
    '(pause) image in its store (pulled now when absent, as the first sandbox would pull it),\n' +
    'restrict_oom_score_adj where root lacks CAP_SYS_RESOURCE, its runtime\n' +
    'and network conditions. For both runtimes: the cgroup hierarchy and the root dir.\n\n' +
    'Exit status: 0 when nothing failed (warnings allowed), 1 otherwise.',
  examples: ['podvisor doctor --runtime=containerd', 'podvisor doctor --runtime=containerd --container-runtime-endpoint unix:///tmp/ctrd/containerd.sock'],
  flags: agentFlagSpecs.filter((f) => ['runtime', 'container-runtime-endpoint', 'root-dir', 'pod-infra-container-image', 'registry-config'].includes(f.name)),
  async run(parsed, io) {
    const settings = agentSettings(parsed, io);
    const checks: Check[] = [];
    if (settings.managedContainerd) checks.push(...(await managedContainerdChecks(settings, io)));
    else if (settings.runtime === 'containerd') checks.push(...(await containerdChecks(settings.runtimeEndpoint, io.env, io)));
    checks.push(cgroupCheck(), rootDirCheck(settings.rootDir));
    io.stdout.write(formatChecks(checks));
    const failed = checks.filter((c) => c.verdict === 'fail').length;
    io.stdout.write(failed ? `${failed} problem${failed === 1 ? '' : 's'} found\n` : 'no problems found\n');
    return failed ? 1 : 0;
  },
});
