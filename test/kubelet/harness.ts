// Shared pieces of the pod-worker tests: a PodKubelet connected, as every command connects it, over
// the CRI on a unix socket to the process runtime service of a temporary root dir; defaulted pods;
// and waiting for states with generous deadlines (never timing asserts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Registry, type Counter } from 'prom-client';
import type { ConfigMap, Container, ContainerStatus, Event, Pod, PodStatus, ProbeType, Secret } from '../../src/api/types.js';
import { defaultPod } from '../../src/api/defaults.js';
import { PodKubelet, type PodKubeletOptions } from '../../src/kubelet/kubelet.js';
import type { RuntimeService } from '../../src/runtime/cri.js';
import { connectCriRuntime } from '../../src/runtime/cri/client.js';
import { startProcessRuntimeService, type ProcessRuntimeService } from '../../src/runtime/process/service.js';
import { RealClock, type Clock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

export interface Harness {
  dir: string;
  kubelet: PodKubelet;
  runtime: RuntimeService;
  /** The probe metrics registry. */
  registry: Registry;
  /** Terminates nothing gracefully: kills everything, stops the runtime service and removes the root dir. */
  close(): Promise<void>;
}

/**
 * The runtime the cases of test/kubelet run on: host processes unless a suite of another runtime
 * (test/containerd) sets one before importing the case files; newHarness then runs every pod on it
 * and kills the pods when the harness closes. The cases are written once, for both.
 */
export interface HarnessRuntime {
  /** `containerd`: what skipOn names. */
  name: string;
  /** A connected client of the runtime (it knows the runtime's capabilities). */
  create(): Promise<RuntimeService>;
  /**
   * The pod as this runtime must see it to behave as host processes do: images pointed at the
   * runtime's test registry and, for the shared cases, the harness's directory (where cases keep
   * marker files) and the host's network shared with the containers.
   */
  preparePod(pod: Pod, harness: { dir: string }): Pod;
}
let harnessRuntime: HarnessRuntime | undefined;

export function runHarnessOn(r: HarnessRuntime | undefined): void {
  harnessRuntime = r;
}

/** The runtime the cases run on: `process` or the name of the one runHarnessOn set. */
export function caseRuntime(): string {
  return harnessRuntime?.name ?? 'process';
}

/**
 * A case's skip option where it cannot apply to a runtime: the reason (shown by the test runner)
 * when the cases run on that runtime, false otherwise.
 */
export function skipOn(runtime: string, why: string): string | false {
  return caseRuntime() === runtime ? `not on ${runtime}: ${why}` : false;
}

/** The process runtime service of the root dir (on the harness's clock), on a socket in it, and a CRI client connected to it. */
async function processRuntimeService(dir: string, clock: Clock): Promise<{ service: ProcessRuntimeService; runtime: RuntimeService }> {
  const service = await startProcessRuntimeService({ rootDir: dir, endpoint: `unix://${join(dir, 'runtime.sock')}`, logger: silentLogger, clock });
  try {
    return { service, runtime: await connectCriRuntime({ endpoint: service.server.endpoint, logger: silentLogger }) };
  } catch (err) {
    await service.close();
    throw err;
  }
}

export async function newHarness(
  opts: { clock?: Clock; configMaps?: ConfigMap[]; secrets?: Secret[]; runtime?: RuntimeService } & Partial<Omit<PodKubeletOptions, 'runtime' | 'clock'>> = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'podvisor-lc-'));
  const clock = opts.clock ?? new RealClock();
  const other = opts.runtime ? undefined : harnessRuntime;
  let service: ProcessRuntimeService | undefined;
  let runtime: RuntimeService;
  if (opts.runtime) runtime = opts.runtime;
  else if (other) runtime = await other.create();
  else ({ service, runtime } = await processRuntimeService(dir, clock));
  const registry = opts.registry ?? new Registry();
  const find = <T extends { metadata?: { name?: string; namespace?: string } }>(list: T[] | undefined, ns: string, name: string) =>
    list?.find((o) => o.metadata?.name === name && (o.metadata?.namespace ?? 'default') === ns);
  const kubelet = new PodKubelet({
    logger: silentLogger,
    rootDir: dir,
    nodeName: 'test-node',
    lookup: {
      configMap: (ns, name) => find(opts.configMaps, ns, name),
      secret: (ns, name) => find(opts.secrets, ns, name),
    },
    ...opts,
    registry,
    runtime,
    clock,
  });
  if (other) {
    const start = kubelet.startPod.bind(kubelet);
    // Tests keep their pod objects: the images they name are rewritten in place.
    kubelet.startPod = (pod: Pod) => start(Object.assign(pod, { spec: other.preparePod(pod, { dir }).spec }));
  }
  return {
    dir,
    kubelet,
    runtime,
    registry,
    close: async () => {
      // A runtime service keeps its containers when the kubelet closes: the process runtime's are
      // killed by the runtime itself, the others' are terminated through the kubelet.
      if (!service) await kubelet.terminateAll({ gracePeriodSeconds: 0 }).catch(() => {});
      await kubelet.close();
      if (service) {
        await service.runtime.close();
        await service.close();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A defaulted pod (as the config loader hands them over) with a fresh uid. */
export function makePod(name: string, containers: Container[], spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return defaultPod(
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() }, spec: { ...spec, containers } },
    { nodeName: 'test-node', source: 'file' },
  );
}

/** A container running `sh -c script`. */
export function sh(name: string, script: string, extra: Partial<Container> = {}): Container {
  return { name, image: 'busybox', command: ['sh', '-c', script], ...extra };
}

export { waitFor } from '../fixtures/wait.js';

export function statusOf(h: Harness, pod: Pod): PodStatus | undefined {
  return h.kubelet.getPodStatus(pod.metadata!.uid!);
}

export function containerStatus(h: Harness, pod: Pod, name: string): ContainerStatus | undefined {
  const s = statusOf(h, pod);
  return [...(s?.containerStatuses ?? []), ...(s?.initContainerStatuses ?? [])].find((c) => c.name === name);
}

export function condition(h: Harness, pod: Pod, type: string): string | undefined {
  return statusOf(h, pod)?.conditions?.find((c) => c.type === type)?.status;
}

export function eventsOf(h: Harness, pod: Pod, reason?: string): Event[] {
  return h.kubelet.events.list().filter((e) => e.involvedObject.uid === pod.metadata!.uid && (reason === undefined || e.reason === reason));
}

/** A compact description of a pod's status, for failure messages. */
export function describe(h: Harness, pod: Pod): string {
  return JSON.stringify({
    status: statusOf(h, pod),
    events: eventsOf(h, pod).map((e) => `${e.reason}: ${e.message} (x${e.count})`),
  });
}

/** Starts the pods and closes the harness afterwards. */
export async function withPods(h: Harness, pods: Pod[], body: () => Promise<void>): Promise<void> {
  try {
    for (const p of pods) h.kubelet.startPod(p);
    await body();
  } finally {
    await h.close();
  }
}

/** prober_probe_total for one pod's container, probe type and result (`successful`, `failed`, `unknown`). */
export async function probeCount(h: Harness, pod: Pod, container: string, type: ProbeType, result: string): Promise<number> {
  const metric = h.registry.getSingleMetric('prober_probe_total') as Counter | undefined;
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => v.labels.pod_uid === pod.metadata!.uid && v.labels.container === container && v.labels.probe_type === type && v.labels.result === result)
    .reduce((n, v) => n + v.value, 0);
}
