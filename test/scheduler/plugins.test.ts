// The filter plugins' decisions on one node, in upstream's words: NodeResourcesFit (requests, init
// containers and sidecars, overhead, pod count, extended resources), NodePorts (declared host ports,
// and every containerPort where pods share the host's network), NodeAffinity and nodeSelector,
// TaintToleration, NodeUnschedulable, InterPodAffinity (required affinity and anti-affinity, the
// existing pods' anti-affinity), PodTopologySpread (DoNotSchedule, missing label, minDomains), and
// FitError's message.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node, Pod } from '../../src/api/types.js';
import { fitErrorMessage, type NodeInfo } from '../../src/scheduler/framework.js';
import { interPodAffinity } from '../../src/scheduler/plugins/interpodaffinity.js';
import { nodeAffinity } from '../../src/scheduler/plugins/nodeaffinity.js';
import { nodePorts } from '../../src/scheduler/plugins/nodeports.js';
import { nodeResourcesFit } from '../../src/scheduler/plugins/noderesources-fit.js';
import { nodeUnschedulable } from '../../src/scheduler/plugins/nodeunschedulable.js';
import { podTopologySpread } from '../../src/scheduler/plugins/podtopologyspread.js';
import { taintToleration } from '../../src/scheduler/plugins/tainttoleration.js';
import { cpu, node, pod } from './helpers.js';

const info = (n: Node, pods: Pod[] = []): NodeInfo => ({ node: n, pods });

test('NodeResourcesFit: requests against allocatable minus the bound pods, every insufficient resource a reason', () => {
  assert.equal(nodeResourcesFit.filter(cpu('500m'), info(node(), [cpu('500m')])), undefined);
  assert.deepEqual(nodeResourcesFit.filter(cpu('500m'), info(node(), [cpu('500m'), cpu('500m')])), {
    code: 'Unschedulable',
    reasons: ['Insufficient cpu'],
    plugin: 'NodeResourcesFit',
  });
  const big = pod({ containers: [{ name: 'c', resources: { requests: { cpu: '2', memory: '2Gi', 'example.com/gpu': '1' } } }] });
  assert.deepEqual(nodeResourcesFit.filter(big, info(node()))?.reasons, ['Insufficient cpu', 'Insufficient memory', 'Insufficient example.com/gpu']);
  assert.deepEqual(nodeResourcesFit.filter(pod(), info(node({ pods: '1' }), [pod()]))?.reasons, ['Too many pods']);
  // A pod requesting nothing fits whatever is used.
  assert.equal(nodeResourcesFit.filter(pod(), info(node(), [cpu('1')])), undefined);
});

test('NodeResourcesFit: an init container peak, sidecars and the overhead count', () => {
  const init = pod({
    initContainers: [{ name: 'i', resources: { requests: { cpu: '800m' } } }],
    containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }],
  });
  assert.deepEqual(nodeResourcesFit.filter(init, info(node(), [cpu('300m')]))?.reasons, ['Insufficient cpu']);
  const sidecar = pod({
    initContainers: [{ name: 's', restartPolicy: 'Always', resources: { requests: { cpu: '400m' } } }],
    containers: [{ name: 'c', resources: { requests: { cpu: '400m' } } }],
  });
  assert.deepEqual(nodeResourcesFit.filter(sidecar, info(node(), [cpu('300m')]))?.reasons, ['Insufficient cpu']);
  assert.equal(nodeResourcesFit.filter(sidecar, info(node(), [cpu('200m')])), undefined);
  const overhead = cpu('600m', { overhead: { cpu: '300m' } });
  assert.deepEqual(nodeResourcesFit.filter(overhead, info(node(), [cpu('200m')]))?.reasons, ['Insufficient cpu']);
});

test('NodePorts: a declared host port held by another pod; on a host network every containerPort', () => {
  const withPort = (hostPort: number | undefined, containerPort = 8080) =>
    pod({ containers: [{ name: 'c', ports: [{ containerPort, ...(hostPort ? { hostPort } : {}) }] }] });
  const podNet = nodePorts('pod');
  assert.equal(podNet.filter(withPort(undefined), info(node(), [withPort(undefined)])), undefined);
  assert.deepEqual(podNet.filter(withPort(80), info(node(), [withPort(80, 81)])), {
    code: 'Unschedulable',
    reasons: ["node(s) didn't have free ports for the requested pod ports"],
    plugin: 'NodePorts',
  });
  assert.notEqual(nodePorts('host').filter(withPort(undefined), info(node(), [withPort(undefined)])), undefined);
});

test('NodeAffinity: nodeSelector and required terms against the node labels; unresolvable', () => {
  const n = node({ labels: { disk: 'ssd' } });
  assert.equal(nodeAffinity.filter(pod({ nodeSelector: { disk: 'ssd' } }), info(n)), undefined);
  assert.deepEqual(nodeAffinity.filter(pod({ nodeSelector: { disk: 'hdd' } }), info(n)), {
    code: 'UnschedulableAndUnresolvable',
    reasons: ["node(s) didn't match Pod's node affinity/selector"],
    plugin: 'NodeAffinity',
  });
  const terms = (...t: unknown[]) => pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: t as never } } } });
  assert.equal(
    nodeAffinity.filter(
      terms({ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['vm'] }] }),
      info(n),
    ),
    undefined,
  );
  assert.notEqual(nodeAffinity.filter(terms({ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['ssd'] }] }), info(n)), undefined);
});

test('TaintToleration and NodeUnschedulable', () => {
  const tainted = node({
    taints: [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'soft', effect: 'PreferNoSchedule' },
    ],
  });
  assert.deepEqual(taintToleration.filter(pod(), info(tainted))?.reasons, ['node(s) had untolerated taint {dedicated: gpu}']);
  assert.equal(
    taintToleration.filter(pod({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }), info(tainted)),
    undefined,
  );
  assert.equal(taintToleration.filter(pod({ tolerations: [{ operator: 'Exists' }] }), info(tainted)), undefined);
  const cordoned = node({ unschedulable: true });
  assert.deepEqual(nodeUnschedulable.filter(pod(), info(cordoned))?.reasons, ['node(s) were unschedulable']);
  assert.equal(
    nodeUnschedulable.filter(pod({ tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), info(cordoned)),
    undefined,
  );
});

test('InterPodAffinity: required anti-affinity on the hostname keeps a second replica off; affinity needs its peer or matches itself', () => {
  const ipa = interPodAffinity(() => ({}));
  const anti = (labels: Record<string, string>) =>
    pod(
      {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'db' } } }],
          },
        },
      },
      labels,
    );
  assert.equal(ipa.filter(anti({ app: 'db' }), info(node())), undefined);
  assert.deepEqual(ipa.filter(anti({ app: 'db' }), info(node(), [anti({ app: 'db' })])), {
    code: 'Unschedulable',
    reasons: ["node(s) didn't match pod anti-affinity rules"],
    plugin: 'InterPodAffinity',
  });
  // A pod the existing pod's anti-affinity selects is kept off too.
  assert.deepEqual(ipa.filter(pod({}, { app: 'db' }), info(node(), [anti({ app: 'other' })]))?.reasons, [
    "node(s) didn't satisfy existing pods anti-affinity rules",
  ]);
  // A topology key the node lacks puts it in no domain.
  const antiZone = pod(
    {
      affinity: {
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', labelSelector: { matchLabels: { app: 'db' } } }] },
      },
    },
    { app: 'db' },
  );
  assert.equal(ipa.filter(antiZone, info(node(), [pod({}, { app: 'db' })])), undefined);
  const aff = (labels: Record<string, string>) =>
    pod(
      {
        affinity: {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'cache' } } }],
          },
        },
      },
      labels,
    );
  assert.deepEqual(ipa.filter(aff({ app: 'web' }), info(node()))?.code, 'UnschedulableAndUnresolvable');
  assert.equal(ipa.filter(aff({ app: 'cache' }), info(node())), undefined, 'the first of a group matches its own term');
  assert.equal(ipa.filter(aff({ app: 'web' }), info(node(), [pod({}, { app: 'cache' })])), undefined);
});

test('PodTopologySpread: DoNotSchedule needs the key on the node; one domain is skewed only below minDomains', () => {
  const spread = (maxSkew: number, minDomains?: number, key = 'kubernetes.io/hostname') =>
    pod(
      {
        topologySpreadConstraints: [
          {
            maxSkew,
            topologyKey: key,
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'w' } },
            ...(minDomains ? { minDomains } : {}),
          },
        ],
      },
      { app: 'w' },
    );
  const others = [pod({}, { app: 'w' }), pod({}, { app: 'w' })];
  assert.equal(podTopologySpread.filter(spread(1), info(node(), others)), undefined);
  assert.deepEqual(podTopologySpread.filter(spread(1, undefined, 'zone'), info(node(), others))?.reasons, [
    "node(s) didn't match pod topology spread constraints (missing required label)",
  ]);
  assert.deepEqual(podTopologySpread.filter(spread(2, 2), info(node(), others))?.reasons, ["node(s) didn't match pod topology spread constraints"]);
  assert.equal(podTopologySpread.filter(spread(3, 2), info(node(), others)), undefined);
});

test("FitError's message: reasons counted and sorted, then the preemption message", () => {
  assert.equal(
    fitErrorMessage(
      1,
      [{ code: 'Unschedulable', reasons: ['Insufficient memory', 'Insufficient cpu'], plugin: 'NodeResourcesFit' }],
      'preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    ),
    '0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
  );
});
