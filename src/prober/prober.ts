// The common probe wrapper (§5.1), after the kubelet's prober.go: picks the probe spec, runs its
// action up to three times while it errors, maps the low-level result and records the Unhealthy and
// ProbeWarning events on the container.

import type { Container, Pod, PodStatus, Probe, ProbeType } from '../api/types.js';
import type { EventRecorder, EventObject } from '../events/recorder.js';
import type { RuntimeService } from '../runtime/cri.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { doExecProbe } from './exec.js';
import { GRPCHealthProber } from './grpc.js';
import { doHTTPProbe, newRequestForHTTPGetAction } from './http.js';
import { resolveContainerPort, type ActionOutcome } from './probe.js';
import { doTCPProbe } from './tcp.js';
import type { ProbeOutcome, Prober } from './types.js';
import { probeOf, probeSettings } from './worker.js';

/** Attempts per probe while the action errors (maxProbeRetries). */
export const MAX_PROBE_RETRIES = 3;

export interface ContainerProberOptions {
  runtime: RuntimeService;
  recorder: EventRecorder;
  logger: Logger;
  clock: Clock;
  /** `<major>.<minor>` for `User-Agent: kube-probe/<major>.<minor>`. */
  kubeVersion: string;
  /**
   * Where to dial a pod's address when the agent cannot reach pod IPs directly (containerd under
   * RootlessKit: a loopback port forwarded into its network namespace); the address itself otherwise.
   */
  podAddress?: (host: string, port: number) => Promise<{ host: string; port: number }>;
}

export class ContainerProber implements Prober {
  private readonly userAgent: string;
  private readonly grpc: GRPCHealthProber;

  constructor(private readonly opts: ContainerProberOptions) {
    this.userAgent = `kube-probe/${opts.kubeVersion}`;
    this.grpc = new GRPCHealthProber(this.userAgent);
  }

  async probe(probeType: ProbeType, pod: Pod, status: PodStatus, container: Container, containerId: string): Promise<ProbeOutcome> {
    if (probeType !== 'Liveness' && probeType !== 'Readiness' && probeType !== 'Startup') {
      return { result: 'Failure', error: new Error(`unknown probe type: ${JSON.stringify(probeType)}`) };
    }
    const spec = probeOf(container, probeType);
    if (!spec) {
      this.opts.logger.info('Probe is nil', { probeType, pod: pod.metadata?.name, container: container.name });
      return { result: 'Success' };
    }

    const { result, output, error } = await this.runProbeWithRetries(spec, pod, status, container, containerId);
    if (error) {
      this.opts.logger.debug('Probe errored', { probeType, pod: pod.metadata?.name, container: container.name, err: error });
      this.event(pod, container, 'Unhealthy', `${probeType} probe errored and resulted in ${result} state: ${error.message}`);
      return { result: 'Failure', error };
    }
    switch (result) {
      case 'success':
        return { result: 'Success', output };
      case 'warning':
        this.event(pod, container, 'ProbeWarning', `${probeType} probe warning: ${output}`);
        return { result: 'Success', output };
      case 'failure':
        this.event(pod, container, 'Unhealthy', `${probeType} probe failed: ${output}`);
        return { result: 'Failure', output };
      default:
        this.opts.logger.debug('Probe unknown without error', { probeType, pod: pod.metadata?.name, container: container.name });
        return { result: 'Failure', output };
    }
  }

  private async runProbeWithRetries(spec: Probe, pod: Pod, status: PodStatus, container: Container, containerId: string): Promise<ActionOutcome> {
    let outcome: ActionOutcome = { result: 'unknown', output: '' };
    for (let i = 0; i < MAX_PROBE_RETRIES; i++) {
      try {
        outcome = await this.runProbe(spec, pod, status, container, containerId);
      } catch (err) {
        outcome = { result: 'unknown', output: '', error: err instanceof Error ? err : new Error(String(err)) };
      }
      if (!outcome.error) return outcome;
    }
    return outcome;
  }

  private async runProbe(spec: Probe, pod: Pod, status: PodStatus, container: Container, containerId: string): Promise<ActionOutcome> {
    const dial = this.opts.podAddress;
    if (!dial || spec.exec) return this.runProbeAt(spec, pod, status, container, containerId);
    // Only the pod's own address goes through the dialer (a probe's host: is dialled as it is).
    const podIP = status.podIP ?? '';
    if (spec.httpGet && !spec.httpGet.host) {
      const port = resolveContainerPort(spec.httpGet.port as number | string, container);
      const to = await dial(podIP, port);
      const req = { ...newRequestForHTTPGetAction(spec.httpGet, container, to.host, this.userAgent), port: to.port };
      return doHTTPProbe(req, probeSettings(spec).timeoutSeconds, this.opts.clock);
    }
    if (spec.tcpSocket && !spec.tcpSocket.host) {
      const to = await dial(podIP, resolveContainerPort(spec.tcpSocket.port as number | string, container));
      return doTCPProbe(to.host, to.port, probeSettings(spec).timeoutSeconds, this.opts.clock);
    }
    if (spec.grpc) {
      const to = await dial(podIP, spec.grpc.port);
      return this.grpc.probe(to.host, spec.grpc.service ?? '', to.port, probeSettings(spec).timeoutSeconds);
    }
    return this.runProbeAt(spec, pod, status, container, containerId);
  }

  private runProbeAt(spec: Probe, pod: Pod, status: PodStatus, container: Container, containerId: string): Promise<ActionOutcome> {
    const timeoutSeconds = probeSettings(spec).timeoutSeconds;
    const podIP = status.podIP ?? '';
    if (spec.exec) {
      return doExecProbe(this.opts.runtime, containerId, container, spec.exec.command ?? [], timeoutSeconds);
    }
    if (spec.httpGet) {
      const req = newRequestForHTTPGetAction(spec.httpGet, container, podIP, this.userAgent);
      return doHTTPProbe(req, timeoutSeconds, this.opts.clock);
    }
    if (spec.tcpSocket) {
      const port = resolveContainerPort(spec.tcpSocket.port as number | string, container);
      return doTCPProbe(spec.tcpSocket.host || podIP, port, timeoutSeconds, this.opts.clock);
    }
    if (spec.grpc) {
      return this.grpc.probe(podIP, spec.grpc.service ?? '', spec.grpc.port, timeoutSeconds);
    }
    const m = pod.metadata ?? {};
    return Promise.resolve({
      result: 'unknown',
      output: '',
      error: new Error(`missing probe handler for ${m.name ?? ''}_${m.namespace ?? ''}(${m.uid ?? ''}):${container.name}`),
    });
  }

  private event(pod: Pod, container: Container, reason: string, message: string): void {
    const isInit = (pod.spec?.initContainers ?? []).some((c) => c.name === container.name);
    const obj: EventObject = {
      namespace: pod.metadata?.namespace ?? '',
      name: pod.metadata?.name ?? '',
      uid: pod.metadata?.uid ?? '',
      fieldPath: `${isInit ? 'spec.initContainers' : 'spec.containers'}{${container.name}}`,
    };
    this.opts.recorder.event(obj, 'Warning', reason, message);
  }
}
