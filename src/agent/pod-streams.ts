// A pod's container streams for the API and the kubelet routes: logs (the container chosen as the
// API server chooses it, the current or previous instance, followed until it stops), interactive exec
// and attach through the CRI Exec/Attach URLs of the runtime's streaming server (as the kubelet
// proxies them), and port-forward as a TCP connection to the pod's port.

import { connect, type Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import type { ContainerStatus, Pod } from '../api/types.js';
import type { StreamOptions } from '../kubeapi/backend.js';
import { ApiError } from '../http/status.js';
import type { ExecSession, LogOptions } from '../runtime/streams.js';
import { containerLogStream } from '../runtime/logs/log-stream.js';
import type { RuntimeService } from '../runtime/cri.js';
import { connectRuntimeStream } from '../runtime/cri/stream-client.js';
import { containerLogPath, podLogDir } from '../runtime/root-dir.js';
import { toRFC3339 } from '../status/time.js';
import type { Clock } from '../util/clock.js';

const bad = (message: string) => new ApiError(400, 'BadRequest', message);
const stripScheme = (id: string | undefined) => (id ?? '').replace(/^[a-z]+:\/\//, '');

/** kubectl's default container: the annotation, the only one, or an error naming the choices. */
export function defaultContainerName(pod: Pod): string {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  const annotated = pod.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
  if (annotated && names.includes(annotated)) return annotated;
  if (names.length === 1) return names[0]!;
  const inits = (pod.spec?.initContainers ?? []).map((c) => c.name);
  throw bad(
    `a container name must be specified for pod ${pod.metadata?.name ?? ''}, choose one of: [${names.join(' ')}]` +
      (inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : ''),
  );
}

function containerStatusOf(pod: Pod, name: string): ContainerStatus | undefined {
  const st = pod.status;
  return [...(st?.containerStatuses ?? []), ...(st?.initContainerStatuses ?? []), ...(st?.ephemeralContainerStatuses ?? [])].find((s) => s.name === name);
}

function checkContainer(pod: Pod, name: string): void {
  const spec = pod.spec;
  const all = [...(spec?.containers ?? []), ...(spec?.initContainers ?? []), ...(spec?.ephemeralContainers ?? [])].map((c) => c.name);
  if (!all.includes(name)) throw bad(`container ${name} is not valid for pod ${pod.metadata?.name ?? ''}`);
}

/** The streams of a CRI Exec/Attach request: stderr goes into the terminal with a tty. */
const criStreams = (o: Omit<StreamOptions, 'command' | 'container'>) => ({ tty: o.tty, stdin: o.stdin, stdout: o.stdout, stderr: o.stderr && !o.tty });

export class PodStreams {
  constructor(
    private readonly runtime: RuntimeService,
    private readonly rootDir: string,
    private readonly clock: Clock,
  ) {}

  async log(pod: Pod, opts: LogOptions): Promise<Readable> {
    const podName = pod.metadata?.name ?? '';
    checkContainer(pod, opts.container);
    const cs = containerStatusOf(pod, opts.container);
    let id: string;
    let restart = cs?.restartCount ?? 0;
    if (opts.previous) {
      id = stripScheme(cs?.lastState?.terminated?.containerID);
      restart -= 1;
      if (!id || restart < 0) throw bad(`previous terminated container ${JSON.stringify(opts.container)} in pod ${JSON.stringify(podName)} not found`);
    } else {
      id = stripScheme(cs?.containerID);
      if (!id) {
        const reason = cs?.state?.waiting?.reason ?? 'ContainerCreating';
        throw bad(`container ${JSON.stringify(opts.container)} in pod ${JSON.stringify(podName)} is waiting to start: ${reason}`);
      }
    }
    let path: string | undefined;
    try {
      path = (await this.runtime.containerStatus(id)).logPath || undefined;
    } catch {
      // removed already: the log layout still finds it
    }
    const m = pod.metadata ?? {};
    path ??= `${podLogDir(this.rootDir, m.namespace ?? 'default', podName, m.uid ?? '')}/${containerLogPath(opts.container, restart)}`;
    const sinceTime = opts.sinceTime ?? (opts.sinceSeconds !== undefined ? toRFC3339(this.clock.now() - opts.sinceSeconds * 1000) : undefined);
    return containerLogStream(path, {
      ...(opts.tailLines !== undefined ? { tailLines: opts.tailLines } : {}),
      ...(sinceTime !== undefined ? { sinceTime } : {}),
      ...(opts.timestamps ? { timestamps: true } : {}),
      ...(opts.limitBytes !== undefined ? { limitBytes: opts.limitBytes } : {}),
      follow: !!opts.follow && !opts.previous,
      isRunning: async () => {
        try {
          return (await this.runtime.containerStatus(id)).state === 'CONTAINER_RUNNING';
        } catch {
          return false;
        }
      },
    });
  }

  private runningContainer(pod: Pod, name: string): string {
    checkContainer(pod, name);
    const cs = containerStatusOf(pod, name);
    const id = stripScheme(cs?.containerID);
    if (!id || !cs?.state?.running) {
      throw bad(`unable to upgrade connection: container not found (${JSON.stringify(name)})`);
    }
    return id;
  }

  /**
   * Exec, as the kubelet does it: through the runtime's streaming server (CRI Exec), so that the
   * runtime owns the command — it dies with its container, or when this stream ends (the agent killed).
   */
  async exec(pod: Pod, opts: StreamOptions): Promise<ExecSession> {
    const id = this.runningContainer(pod, opts.container);
    if (!this.runtime.capabilities.streaming.exec) {
      throw new ApiError(
        500,
        'InternalError',
        `interactive exec is not supported by this runtime (${this.runtime.name}); use probes' ExecSync or the runtime's own tools`,
      );
    }
    return this.viaRuntime(() => this.runtime.exec({ containerId: id, cmd: opts.command, ...criStreams(opts) }), opts);
  }

  /** Exec or attach through the runtime's streaming server: the URL its CRI call answers. */
  private async viaRuntime(call: () => Promise<{ url: string }>, opts: Omit<StreamOptions, 'command'>): Promise<ExecSession> {
    let url: string;
    try {
      ({ url } = await call());
    } catch (err) {
      throw new ApiError(500, 'InternalError', `unable to upgrade connection: ${(err as Error).message}`);
    }
    return connectRuntimeStream(url, criStreams(opts));
  }

  /**
   * Attach, as the kubelet does it: through the runtime's streaming server (CRI Attach). Where
   * containers have no stdin (the process runtime), an attach follows their output only.
   */
  async attach(pod: Pod, opts: Omit<StreamOptions, 'command'>): Promise<ExecSession> {
    const id = this.runningContainer(pod, opts.container);
    const { stdin, streaming } = this.runtime.capabilities;
    if (opts.stdin && !stdin) throw bad(`the ${this.runtime.name} runtime does not give containers a stdin to attach to`);
    if (!streaming.attach) throw new ApiError(500, 'InternalError', `attach is not supported by this runtime (${this.runtime.name})`);
    return this.viaRuntime(() => this.runtime.attach({ containerId: id, ...criStreams(opts) }), opts);
  }

  portForward(pod: Pod, port: number): Promise<Duplex> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) return Promise.reject(bad(`invalid port ${port}`));
    const ip = pod.status?.podIP || '127.0.0.1';
    return new Promise((resolve, reject) => {
      const sock: Socket = connect({ host: ip, port });
      sock.once('connect', () => {
        sock.removeAllListeners('error');
        resolve(sock);
      });
      sock.once('error', (err) =>
        reject(
          new ApiError(
            500,
            'InternalError',
            `error forwarding port ${port} to pod ${pod.metadata?.name ?? ''}, uid ${pod.metadata?.uid ?? ''}: ${err.message}`,
          ),
        ),
      );
    });
  }
}
