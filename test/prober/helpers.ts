// Shared fixtures for the prober tests: pods and statuses shaped like the kubelet's own prober test
// fixtures (common_test.go), a status provider the tests write into, a recording event sink, and a
// scripted prober standing in at the prober boundary the kubelet's worker tests fake.

import type { Container, ContainerStatus, Pod, PodStatus, Probe, ProbeType } from '../../src/api/types.js';
import type { EventObject, EventRecorder, EventType } from '../../src/events/recorder.js';
import type { RuntimeService } from '../../src/runtime/cri.js';
import type { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { ProberManager, type ProberManagerOptions } from '../../src/prober/manager.js';
import type { PodStatusProvider, ProbeOutcome, ProbeResult, Prober } from '../../src/prober/types.js';

export const testPodUID = 'test-pod-uid';
export const testContainerName = 'cOnTaInEr_NaMe';
export const testContainerID = 'test://cOnTaInEr_Id';

export class TestStatusProvider implements PodStatusProvider {
  readonly statuses = new Map<string, PodStatus>();
  readonly pods = new Map<string, Pod>();
  /** When set, getPodStatus throws (a failing iteration). */
  throwNext = 0;

  getPodStatus(podUid: string): PodStatus | undefined {
    if (this.throwNext > 0) {
      this.throwNext--;
      throw new Error('status provider exploded');
    }
    return this.statuses.get(podUid);
  }
  getPod(podUid: string): Pod | undefined {
    return this.pods.get(podUid);
  }
  set(pod: Pod, status: PodStatus): void {
    this.pods.set(pod.metadata!.uid!, pod);
    this.statuses.set(pod.metadata!.uid!, status);
  }
}

export class RecordingRecorder implements EventRecorder {
  readonly events: { obj: EventObject; type: EventType; reason: string; message: string }[] = [];
  event(obj: EventObject, type: EventType, reason: string, message: string): void {
    this.events.push({ obj, type, reason, message });
  }
}

/** A prober returning a settable result; counts calls. */
export class ScriptedProber implements Prober {
  calls = 0;
  result: ProbeResult = 'Success';
  error: Error | undefined;
  /** Per-call results taken first, then `result`. */
  queue: ProbeOutcome[] = [];
  /** When set, each probe waits for this promise before answering. */
  gate: Promise<void> | undefined;
  readonly seen: { probeType: ProbeType; podUid: string; containerId: string; at: number }[] = [];
  constructor(private readonly clock?: FakeClock) {}

  async probe(probeType: ProbeType, pod: Pod, _status: PodStatus, _c: Container, containerId: string): Promise<ProbeOutcome> {
    this.calls++;
    this.seen.push({ probeType, podUid: pod.metadata?.uid ?? '', containerId, at: this.clock?.now() ?? 0 });
    if (this.gate) await this.gate;
    const next = this.queue.shift();
    if (next) return next;
    return this.error ? { result: 'Failure', error: this.error } : { result: this.result };
  }
}

export function defaultProbe(overrides: Partial<Probe> = {}): Probe {
  return {
    exec: { command: ['true'] },
    timeoutSeconds: 1,
    periodSeconds: 1,
    successThreshold: 1,
    failureThreshold: 1,
    ...overrides,
  };
}

export function probeField(t: ProbeType): 'livenessProbe' | 'readinessProbe' | 'startupProbe' {
  return t === 'Liveness' ? 'livenessProbe' : t === 'Readiness' ? 'readinessProbe' : 'startupProbe';
}

/** A pod with one container carrying probeSpec as its probe of type t. */
export function getTestPod(t: ProbeType, probeSpec: Probe, opts: { restartPolicy?: string; uid?: string; sidecar?: boolean } = {}): Pod {
  const container: Container = { name: testContainerName, image: 'img', [probeField(t)]: probeSpec };
  const spec: NonNullable<Pod['spec']> = opts.sidecar
    ? { containers: [{ name: 'main', image: 'img' }], initContainers: [{ ...container, restartPolicy: 'Always' }] }
    : { containers: [container] };
  spec.restartPolicy = opts.restartPolicy ?? 'Always';
  return { metadata: { name: 'test-pod', namespace: 'test-ns', uid: opts.uid ?? testPodUID }, spec };
}

export function runningStatus(startedAtMs: number, opts: { started?: boolean; id?: string; sidecar?: boolean } = {}): PodStatus {
  const cs: ContainerStatus = {
    name: testContainerName,
    containerID: opts.id ?? testContainerID,
    image: 'img',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { running: { startedAt: new Date(startedAtMs).toISOString() } },
    ...(opts.started === undefined ? {} : { started: opts.started }),
  };
  return opts.sidecar
    ? { phase: 'Running', podIP: '127.0.0.1', initContainerStatuses: [cs], containerStatuses: [] }
    : { phase: 'Running', podIP: '127.0.0.1', containerStatuses: [cs] };
}

export function withState(status: PodStatus, state: ContainerStatus['state']): PodStatus {
  const s = structuredClone(status);
  const list = s.containerStatuses?.length ? s.containerStatuses : s.initContainerStatuses!;
  list[0]!.state = state;
  return s;
}

/** Stands in for the runtime where a test needs none (the prober is scripted). */
export const noRuntime = {} as RuntimeService;

export interface Harness {
  clock: FakeClock;
  provider: TestStatusProvider;
  prober: ScriptedProber;
  manager: ProberManager;
  recorder: RecordingRecorder;
}

export function newHarness(clock: FakeClock, opts: Partial<ProberManagerOptions> = {}): Harness {
  const provider = new TestStatusProvider();
  const prober = new ScriptedProber(clock);
  const recorder = new RecordingRecorder();
  const manager = new ProberManager({
    clock,
    logger: silentLogger,
    runtime: noRuntime,
    recorder,
    statusProvider: provider,
    prober,
    random: () => 0,
    ...opts,
  });
  return { clock, provider, prober, manager, recorder };
}

/** Runs one() n times, `parallel` at a time, and collects the outcomes (probe load against real servers). */
export async function runMany<T>(n: number, parallel: number, one: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        next++;
        out.push(await one());
      }
    }),
  );
  return out;
}
