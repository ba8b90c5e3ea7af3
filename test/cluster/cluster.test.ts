// Cluster join against a real kube-apiserver 1.20.2 with etcd: podvisor registers as the node
// `podvisor-node` with the node identity (Node authorizer and NodeRestriction in force), runs the pods
// bound to it on the process runtime, and reports back; kubectl (admin) drives and observes it.
// One control plane serves the whole file; the tests run in order and share the node.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpsRequest } from 'node:https';
import { randomUUID } from 'node:crypto';
import { defaultPod } from '../../src/api/defaults.js';
import { PodKubelet } from '../../src/kubelet/kubelet.js';
import { ProcessRuntime } from '../../src/runtime/process/runtime.js';
import { RealClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { startClusterNode, type ClusterNode } from '../../src/cluster/index.js';
import { ControlPlane, skipReason } from './control-plane.js';
import { waitFor } from '../fixtures/wait.js';

const NODE = 'podvisor-node';
// The node's InternalIP (--node-ip): a non-loopback address, as a node of a cluster has (TEST-NET-1;
// nothing here connects to it, the API server only records and validates it).
const NODE_IP = '192.0.2.10';
const reason = skipReason();

// kubectl's JSON, read loosely.
type Json = Record<string, any>;

describe('cluster join against a real kube-apiserver', { skip: reason ? `skipped: ${reason}` : false }, () => {
  let cp: ControlPlane;
  let node: ClusterNode;
  let kubelet: PodKubelet;
  let runtime: ProcessRuntime;
  let rootDir: string;
  let outDir: string;
  let newKubelet: Parameters<typeof startClusterNode>[0]['createKubelet'];
  let nodeOpts: Omit<Parameters<typeof startClusterNode>[0], 'createKubelet'>;

  const podJSON = (name: string) => cp.getJSON<Json>(['pod', name, '-n', 'default']);
  const apply = (obj: Json) => {
    const f = join(outDir, `${randomUUID()}.json`);
    writeFileSync(f, JSON.stringify(obj));
    return cp.kubectlOk(['create', '-f', f]);
  };
  const boundPod = (name: string, containers: Json[], spec: Json = {}): Json => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 10, ...spec, containers },
  });
  const shC = (name: string, script: string, extra: Json = {}) => ({ name, image: 'busybox', command: ['sh', '-c', script], ...extra });
  const describePod = async (name: string) => JSON.stringify((await podJSON(name))?.status ?? 'gone');

  before(async () => {
    cp = new ControlPlane();
    await cp.start();
    rootDir = mkdtempSync(join(tmpdir(), 'podvisor-node-root-'));
    outDir = mkdtempSync(join(tmpdir(), 'podvisor-node-out-'));
    const clock = new RealClock();
    runtime = new ProcessRuntime({ rootDir, clock, logger: silentLogger });
    // The kubelet's view of a runtime service that outlives it: closing the kubelet leaves the containers running.
    const service = new Proxy(runtime, {
      get: (t, p) => (p === 'close' ? async () => {} : typeof (t as any)[p] === 'function' ? (t as any)[p].bind(t) : (t as any)[p]),
    });
    newKubelet = (lookup, nodeName, hostIP) =>
      new PodKubelet({
        runtime: service,
        clock,
        logger: silentLogger,
        rootDir,
        nodeName,
        hostIP,
        lookup,
        nodeAllocatable: { cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 },
      });
    const staticPod = defaultPod(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'static-web', namespace: 'default', labels: { app: 'static' } },
        spec: { containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }] },
      },
      { nodeName: NODE, source: 'file', path: '/etc/podvisor/manifests/static-web.yaml' },
    );
    nodeOpts = {
      kubeconfig: cp.nodeKubeconfig,
      nodeName: NODE,
      version: '0.1.0',
      runtime,
      internalIP: NODE_IP,
      kubeletPort: 10250,
      nodeStatusUpdateFrequencyMs: 2000,
      leaseRenewIntervalMs: 1000,
      staticPods: [staticPod],
      clock,
    };
    ({ node, kubelet } = startClusterNode({
      kubeconfig: cp.nodeKubeconfig,
      nodeName: NODE,
      version: '0.1.0',
      runtime,
      internalIP: NODE_IP,
      kubeletPort: 10250,
      nodeLabels: 'node.kubernetes.io/pool=edge',
      registerWithTaints: 'example.com/dedicated=podvisor:PreferNoSchedule',
      nodeStatusUpdateFrequencyMs: 2000,
      leaseRenewIntervalMs: 1000,
      staticPods: [staticPod],
      clock,
      createKubelet: newKubelet,
    }));
    await node.whenRegistered();
    await node.whenListed();
  });

  after(async () => {
    try {
      await kubelet?.terminateAll({ gracePeriodSeconds: 0 });
      await node?.stop();
      await kubelet?.close();
    } finally {
      await cp?.destroy();
      if (rootDir) rmSync(rootDir, { recursive: true, force: true });
      if (outDir) rmSync(outDir, { recursive: true, force: true });
    }
  });

  it('registers the Node, which kubectl shows Ready with its status', async () => {
    const line = await waitFor(
      'node Ready in kubectl get nodes',
      async () => {
        const out = await cp.kubectlOk(['get', 'nodes', '--no-headers']);
        return out.split('\n').find((l) => l.startsWith(`${NODE} `) && /\sReady\s/.test(l));
      },
      60_000,
    );
    assert.match(line, /podvisor\/0\.1\.0/);
    const n = (await cp.getJSON<Json>(['node', NODE]))!;
    assert.equal(n.status.nodeInfo.kubeletVersion, 'podvisor/0.1.0');
    assert.equal(n.status.nodeInfo.containerRuntimeVersion, 'process://0.1.0');
    assert.equal(n.status.nodeInfo.operatingSystem, 'linux');
    assert.equal(n.status.daemonEndpoints.kubeletEndpoint.Port, 10250);
    assert.deepEqual(n.status.addresses[0], { type: 'InternalIP', address: NODE_IP });
    assert.equal(n.status.addresses[1].type, 'Hostname');
    assert.deepEqual({ cpu: n.status.capacity.cpu, memory: n.status.capacity.memory, pods: n.status.capacity.pods }, { cpu: '4', memory: '8Gi', pods: '110' });
    assert.equal(n.status.allocatable.cpu, '4');
    const types = n.status.conditions.map((c: Json) => `${c.type}=${c.status}`).sort();
    assert.deepEqual(types, ['DiskPressure=False', 'MemoryPressure=False', 'PIDPressure=False', 'Ready=True']);
    for (const c of n.status.conditions) assert.ok(c.lastHeartbeatTime && c.lastTransitionTime, `times on ${c.type}`);
    assert.equal(n.metadata.labels['node.kubernetes.io/pool'], 'edge');
    assert.equal(n.metadata.labels['kubernetes.io/hostname'], NODE);
    // The API server's TaintNodesByCondition admission adds node.kubernetes.io/not-ready at creation
    // (the node lifecycle controller, absent here, lifts it once Ready); ours is there beside it.
    assert.deepEqual(
      n.spec.taints.filter((t: Json) => t.key !== 'node.kubernetes.io/not-ready'),
      [{ key: 'example.com/dedicated', value: 'podvisor', effect: 'PreferNoSchedule' }],
    );
    // Heartbeats move on with the status updates.
    const first = n.status.conditions.find((c: Json) => c.type === 'Ready').lastHeartbeatTime;
    await waitFor(
      'a newer Ready heartbeat',
      async () => {
        const m = (await cp.getJSON<Json>(['node', NODE]))!;
        return m.status.conditions.find((c: Json) => c.type === 'Ready').lastHeartbeatTime !== first;
      },
      60_000,
    );
  });

  it('keeps its Lease in kube-node-lease and renews it', async () => {
    const lease = await waitFor('the Lease', () => cp.getJSON<Json>(['lease', NODE, '-n', 'kube-node-lease']), 60_000);
    assert.equal(lease.spec.holderIdentity, NODE);
    assert.equal(lease.spec.leaseDurationSeconds, 40);
    assert.match(lease.spec.renewTime, /\.\d{6}Z$/);
    assert.equal(lease.metadata.ownerReferences?.[0]?.kind, 'Node');
    assert.equal(lease.metadata.ownerReferences[0].name, NODE);
    await waitFor(
      'a renewed Lease',
      async () => (await cp.getJSON<Json>(['lease', NODE, '-n', 'kube-node-lease']))!.spec.renewTime !== lease.spec.renewTime,
      60_000,
    );
  });

  it('runs a pod bound to it: Running and Ready in kubectl get pod -o wide', async () => {
    await apply(boundPod('web', [shC('app', 'while true; do sleep 1; done')]));
    const pod = await waitFor(
      async () => `web Running and Ready: ${await describePod('web')}`,
      async () => {
        const p = await podJSON('web');
        const ready = p?.status?.conditions?.find((c: Json) => c.type === 'Ready')?.status === 'True';
        return p?.status?.phase === 'Running' && ready ? p : undefined;
      },
      60_000,
    );
    assert.equal(pod.status.hostIP, NODE_IP);
    assert.equal(pod.status.containerStatuses[0].ready, true);
    assert.match(pod.status.containerStatuses[0].containerID, /^process:\/\//);
    const wide = await cp.kubectlOk(['get', 'pod', 'web', '-o', 'wide', '--no-headers']);
    assert.match(wide, new RegExp(`^web\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+\\S+\\s+${NODE}\\s`));
    // Its events reached the API server.
    await waitFor(
      'a Started event for web',
      async () => {
        const evs = await cp.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=web', '--no-headers']);
        return /Started/.test(evs);
      },
      60_000,
    );
  });

  it("gives pods on the host's network the node's InternalIP as podIP, which the API server takes as an endpoint address", async () => {
    // The process runtime's pods share the host's network (as spec.hostNetwork pods do anywhere):
    // the kubelet reports the node's IPs for them, never the loopback address the API server refuses.
    const web = (await podJSON('web'))!;
    assert.deepEqual([web.status.podIP, web.status.podIPs, web.status.hostIP], [NODE_IP, [{ ip: NODE_IP }], NODE_IP]);
    await apply(boundPod('hostnet', [shC('app', 'sleep 3600')], { hostNetwork: true }));
    const hostnet = await waitFor(
      async () => `hostnet with a podIP: ${await describePod('hostnet')}`,
      async () => {
        const p = await podJSON('hostnet');
        return p?.status?.podIP ? p : undefined;
      },
      60_000,
    );
    assert.deepEqual(hostnet.status.podIPs, [{ ip: NODE_IP }]);
    // What the endpoints controller writes for a Service selecting these pods: accepted, where a
    // loopback address is refused ("may not be in the loopback range").
    const address = (p: Json) => ({
      ip: p.status.podIP,
      nodeName: NODE,
      targetRef: { kind: 'Pod', namespace: 'default', name: p.metadata.name, uid: p.metadata.uid },
    });
    await apply({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'host-pods', namespace: 'default' },
      subsets: [{ addresses: [address(web), address(hostnet)], ports: [{ port: 8080 }] }],
    });
    await cp.kubectlOk(['delete', 'pod', 'hostnet', '--grace-period=1']);
  });

  it('resolves ConfigMap and Secret references from the API server', async () => {
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { greeting: 'hello' } });
    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, stringData: { password: 's3cret' } });
    const out = join(outDir, 'env-out');
    await apply(
      boundPod('env', [
        shC('app', `echo "$GREETING $PASSWORD" > ${out}; while true; do sleep 1; done`, {
          env: [
            { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'settings', key: 'greeting' } } },
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
          ],
        }),
      ]),
    );
    await waitFor(
      async () => `env output: ${await describePod('env')}`,
      () => existsSync(out) && readFileSync(out, 'utf8').trim() === 'hello s3cret',
      60_000,
    );
  });

  it('gives pods the service-link variables of the cluster’s Services (the API server’s own always)', async () => {
    await cp.kubectlOk(['create', 'namespace', 'links']);
    await apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'fooservice', namespace: 'links' },
      spec: { selector: { app: 'x' }, ports: [{ name: 'http', port: 8765, targetPort: 8080 }] },
    });
    const svc = (await cp.getJSON<Json>(['service', 'fooservice', '-n', 'links']))!;
    const api = (await cp.getJSON<Json>(['service', 'kubernetes', '-n', 'default']))!;
    const script = (file: string) => `env | grep -E '^(KUBERNETES|FOOSERVICE)_' | sort > ${file}.tmp; mv ${file}.tmp ${file}; exec sleep 3600`;
    const linked = join(outDir, 'links-env');
    const unlinked = join(outDir, 'nolinks-env');
    await apply({ ...boundPod('links', [shC('app', script(linked))]), metadata: { name: 'links', namespace: 'links' } });
    await apply({ ...boundPod('nolinks', [shC('app', script(unlinked))], { enableServiceLinks: false }), metadata: { name: 'nolinks', namespace: 'links' } });
    await waitFor('both pods wrote their environment', () => existsSync(linked) && existsSync(unlinked), 60_000);
    const env = (file: string) =>
      Object.fromEntries(
        readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split(/=(.*)/s).slice(0, 2)),
      );
    const withLinks = env(linked);
    assert.equal(withLinks.FOOSERVICE_SERVICE_HOST, svc.spec.clusterIP);
    assert.equal(withLinks.FOOSERVICE_SERVICE_PORT, '8765');
    assert.equal(withLinks.FOOSERVICE_PORT_8765_TCP, `tcp://${svc.spec.clusterIP}:8765`);
    assert.equal(withLinks.KUBERNETES_SERVICE_HOST, api.spec.clusterIP);
    assert.equal(withLinks.KUBERNETES_SERVICE_PORT, String(api.spec.ports[0].port));
    const without = env(unlinked);
    assert.equal(without.FOOSERVICE_SERVICE_HOST, undefined);
    assert.equal(without.KUBERNETES_SERVICE_HOST, api.spec.clusterIP, 'the API server’s Service even without service links');
    await cp.kubectlOk(['delete', 'namespace', 'links', '--wait=false']);
  });

  it('rejects a pod the process runtime cannot run, visibly (phase Failed with reason)', async () => {
    await apply(boundPod('nocommand', [{ name: 'app', image: 'nginx' }]));
    const pod = await waitFor(
      async () => `nocommand Failed: ${await describePod('nocommand')}`,
      async () => {
        const p = await podJSON('nocommand');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      60_000,
    );
    assert.equal(pod.status.reason, 'UnsupportedPodSpec');
    assert.match(pod.status.message, /^Pod was rejected: spec\.containers\[0\]\.command: Required value/);
    const wide = await cp.kubectlOk(['get', 'pod', 'nocommand', '--no-headers']);
    assert.match(wide, /UnsupportedPodSpec/);
    await waitFor(
      'the rejection event',
      async () => /UnsupportedPodSpec/.test(await cp.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=nocommand'])),
      60_000,
    );
  });

  it('kubectl delete pod terminates it gracefully, then it disappears', async () => {
    const marker = join(outDir, 'graceful-term');
    await apply(boundPod('graceful', [shC('app', `trap 'echo term > ${marker}; exit 0' TERM; while true; do sleep 0.2; done`)]));
    await waitFor('graceful Running', async () => (await podJSON('graceful'))?.status?.phase === 'Running', 60_000);
    const uid = (await podJSON('graceful'))!.metadata.uid;
    // kubectl delete waits until the object is gone, which only the node's final DELETE achieves.
    await cp.kubectlOk(['delete', 'pod', 'graceful', '--timeout=60s'], { timeoutMs: 90_000 });
    assert.equal(await podJSON('graceful'), undefined);
    assert.equal(readFileSync(marker, 'utf8').trim(), 'term', 'the container got SIGTERM and ran its handler');
    const events = await cp.kubectlOk(['get', 'events', '--field-selector', `involvedObject.uid=${uid}`]);
    assert.match(events, /Killing/);
  });

  /** PATCH pods/NAME/status as another client (the admin), as a readiness-gate controller does. */
  const patchStatus = (name: string, body: Json): Promise<number> => {
    const env = Object.fromEntries(
      readFileSync(join(cp.dir, 'env'), 'utf8')
        .split('\n')
        .map((l) => /^(?:export )?(\w+)=['"]?(.*?)['"]?$/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1]!, m[2]!]),
    );
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${env.KCP_SERVER}/api/v1/namespaces/default/pods/${name}/status`,
        {
          method: 'PATCH',
          ca: readFileSync(env.KCP_CA!),
          headers: { Authorization: `Bearer ${env.KCP_ADMIN_TOKEN}`, 'Content-Type': 'application/strategic-merge-patch+json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  };
  const gate = (status: string) => ({ status: { conditions: [{ type: 'example.com/lb', status }] } });
  const podReady = async (name: string) => (await podJSON(name))?.status?.conditions?.find((c: Json) => c.type === 'Ready');

  it('merges readiness gates another client patches into the pod status into Ready', async () => {
    await apply(boundPod('gated', [shC('app', 'sleep 3600')], { readinessGates: [{ conditionType: 'example.com/lb' }] }));
    await waitFor(
      async () => `gated Running, ContainersReady: ${await describePod('gated')}`,
      async () => (await podJSON('gated'))?.status?.conditions?.some((c: Json) => c.type === 'ContainersReady' && c.status === 'True'),
      60_000,
    );
    assert.equal((await podReady('gated'))?.reason, 'ReadinessGatesNotReady');
    assert.equal(await patchStatus('gated', gate('True')), 200);
    await waitFor(
      async () => `gated Ready once its gate is True: ${await describePod('gated')}`,
      async () => (await podReady('gated'))?.status === 'True',
      30_000,
    );
    assert.equal(await patchStatus('gated', gate('False')), 200);
    await waitFor(
      async () => `gated not Ready once its gate is False: ${await describePod('gated')}`,
      async () => (await podReady('gated'))?.status === 'False',
      30_000,
    );
    // The node's own status patches leave the gate as its owner set it.
    const conditions = (await podJSON('gated'))!.status.conditions as Json[];
    assert.equal(conditions.find((c) => c.type === 'example.com/lb')?.status, 'False');
  });

  it('enforces an activeDeadlineSeconds set on a running pod', async () => {
    await apply(boundPod('deadline', [shC('app', 'sleep 3600')]));
    await waitFor(
      async () => `deadline Running: ${await describePod('deadline')}`,
      async () => (await podJSON('deadline'))?.status?.phase === 'Running',
      60_000,
    );
    await cp.kubectlOk(['patch', 'pod', 'deadline', '-p', '{"spec":{"activeDeadlineSeconds":2}}']);
    const pod = await waitFor(
      async () => `deadline Failed with its container terminated: ${await describePod('deadline')}`,
      async () => {
        const p = await podJSON('deadline');
        return p?.status?.phase === 'Failed' && p.status.containerStatuses?.[0]?.state?.terminated ? p : undefined;
      },
      60_000,
    );
    assert.equal(pod.status.reason, 'DeadlineExceeded');
  });

  it('mirrors a static pod in the API server, with its status', async () => {
    const name = `static-web-${NODE}`;
    const mirror = await waitFor(
      async () => `mirror pod Running: ${await describePod(name)}`,
      async () => {
        const p = await podJSON(name);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      60_000,
    );
    assert.ok(mirror.metadata.annotations['kubernetes.io/config.mirror']);
    assert.equal(mirror.metadata.annotations['kubernetes.io/config.mirror'], mirror.metadata.annotations['kubernetes.io/config.hash']);
    assert.equal(mirror.metadata.ownerReferences[0].kind, 'Node');
    // Deleting the mirror does not stop the static pod: the mirror comes back.
    await cp.kubectlOk(['delete', 'pod', name, '--wait=false']);
    await waitFor(
      async () => `a new mirror pod: ${await describePod(name)}`,
      async () => {
        const p = await podJSON(name);
        return p && p.metadata.uid !== mirror.metadata.uid && !p.metadata.deletionTimestamp && p.status?.phase === 'Running';
      },
      60_000,
    );
  });

  it('keeps pods running while the API server is away, and catches up when it returns', async () => {
    await apply(boundPod('finisher', [shC('app', 'sleep 4; exit 3')], { restartPolicy: 'Never' }));
    await waitFor(
      async () => `finisher Running: ${await describePod('finisher')}`,
      async () => (await podJSON('finisher'))?.status?.phase === 'Running',
      60_000,
    );
    const web = (await podJSON('web'))!;
    const webCid = web.status.containerStatuses[0].containerID;
    const finisherUid = (await podJSON('finisher'))!.metadata.uid;

    await cp.stop();
    // While it is away the finisher exits and the web container keeps running.
    await waitFor('finisher Failed locally', () => kubelet.getPodStatus(finisherUid)?.phase === 'Failed', 60_000);
    const local = kubelet.getPodStatus(web.metadata.uid)!;
    assert.equal(local.phase, 'Running');
    assert.equal(local.containerStatuses![0]!.containerID, webCid);
    await cp.start();

    const fin = await waitFor(
      async () => `finisher Failed in the API server: ${await describePod('finisher').catch((e: Error) => e.message)}`,
      async () => {
        const p = await podJSON('finisher').catch(() => undefined);
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      90_000,
    );
    assert.equal(fin.status.containerStatuses[0].state.terminated.exitCode, 3);
    const after = (await podJSON('web'))!;
    assert.equal(after.status.phase, 'Running');
    assert.equal(after.status.containerStatuses[0].containerID, webCid, 'same container, not restarted');
    assert.equal(after.status.containerStatuses[0].restartCount, 0);
    // Node status and Lease resume.
    const restartedAt = Date.now();
    await waitFor(
      'a fresh Ready heartbeat after the restart',
      async () => {
        const n = (await cp.getJSON<Json>(['node', NODE]))!;
        const ready = n.status.conditions.find((c: Json) => c.type === 'Ready');
        return ready.status === 'True' && Date.parse(ready.lastHeartbeatTime) >= restartedAt - 1000;
      },
      60_000,
    );
    await waitFor(
      'a renewal after the restart',
      async () => Date.parse((await cp.getJSON<Json>(['lease', NODE, '-n', 'kube-node-lease']))!.spec.renewTime) >= restartedAt - 1000,
      60_000,
    );
  });

  it('a new node over a runtime that outlived the old one adopts its pods: same containers, no restarts', async () => {
    const web = (await podJSON('web'))!;
    const webCid = web.status.containerStatuses[0].containerID;
    const staticName = `static-web-${NODE}`;
    const staticCid = (await podJSON(staticName))!.status.containerStatuses[0].containerID;
    const envUid = (await podJSON('env'))!.metadata.uid;
    // The old node goes away without stopping its pods (its kubelet closes, the runtime keeps them).
    await node.stop();
    await kubelet.close();
    // Meanwhile a pod is force-deleted: nobody is left to stop it but the next node.
    await cp.kubectlOk(['delete', 'pod', 'env', '--grace-period=0', '--force']);
    ({ node, kubelet } = startClusterNode({ ...nodeOpts, adoptRunning: true, createKubelet: newKubelet }));
    await node.whenListed();
    await waitFor(
      async () => `web adopted: ${await describePod('web')}`,
      async () => {
        const p = await podJSON('web');
        const cs = p?.status?.containerStatuses?.[0];
        return p?.status?.phase === 'Running' && cs?.ready && cs.containerID === webCid && cs.restartCount === 0;
      },
      60_000,
    );
    assert.equal(kubelet.getPodStatus(web.metadata.uid)?.containerStatuses?.[0]?.containerID, webCid);
    await waitFor(
      async () => `static pod adopted: ${await describePod(staticName)}`,
      async () => (await podJSON(staticName))?.status?.containerStatuses?.[0]?.containerID === staticCid,
      60_000,
    );
    // The force-deleted pod's sandbox is stopped and removed.
    await waitFor('the orphaned sandbox removed', async () => !(await runtime.listPodSandbox()).some((sb) => sb.metadata.uid === envUid), 60_000);
  });
});
