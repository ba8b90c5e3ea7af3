// How a core/v1 Node is kept by the object store (pkg/registry/core/node/strategy.go and
// pkg/apis/core/validation ValidateNode): its schema for strict decoding, a status subresource (the
// node agent writes capacity, allocatable, conditions, addresses and nodeInfo; `kubectl label`,
// `taint` and `cordon` write metadata and spec), and the validation of its name, labels and taints.

import type { FieldError } from '../api/field-errors.js';
import { invalid, newPath, notSupported, required } from '../api/field-errors.js';
import type { Taint } from '../api/types.js';
import { apiSchema, type Schema } from '../api/schema.js';
import { isDNS1123Subdomain } from '../api/validation/names.js';
import { validateAnnotations, validateLabels } from '../api/validation/pod.js';
import type { KubeObject, ObjectStrategy } from './backend.js';

const str = { type: 'string' } as const;
const any = { type: 'any' } as const;

/** The API schema with core/v1 Node (the generated schema holds the workload kinds only). */
const nodeSchema: Schema = {
  source: apiSchema.source,
  types: {
    ...apiSchema.types,
    'core/v1.Node': {
      fields: {
        apiVersion: str,
        kind: str,
        metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
        spec: { type: 'object', ref: 'core/v1.NodeSpec' },
        status: { type: 'object', ref: 'core/v1.NodeStatus' },
      },
    },
    'core/v1.NodeSpec': {
      fields: {
        podCIDR: str,
        podCIDRs: { type: 'array', items: str },
        providerID: str,
        unschedulable: { type: 'boolean' },
        taints: { type: 'array', items: { type: 'object', ref: 'core/v1.Taint' } },
        configSource: any,
        externalID: str,
      },
    },
    'core/v1.Taint': { fields: { key: str, value: str, effect: str, timeAdded: str } },
    'core/v1.NodeStatus': {
      fields: {
        capacity: { type: 'map', values: { type: 'quantity' } },
        allocatable: { type: 'map', values: { type: 'quantity' } },
        phase: str,
        conditions: { type: 'array', items: { type: 'object', ref: 'core/v1.NodeCondition' } },
        addresses: { type: 'array', items: { type: 'object', ref: 'core/v1.NodeAddress' } },
        daemonEndpoints: any,
        nodeInfo: any,
        images: any,
        volumesInUse: any,
        volumesAttached: any,
        config: any,
        runtimeHandlers: any,
        features: any,
      },
    },
    'core/v1.NodeCondition': {
      fields: { type: str, status: str, lastHeartbeatTime: str, lastTransitionTime: str, reason: str, message: str },
    },
    'core/v1.NodeAddress': { fields: { type: str, address: str } },
  },
};

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** validateNodeTaints: each taint's key, effect and value; no two with the same key and effect. */
function validateTaints(taints: readonly Taint[] | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (taints ?? []).forEach((t, i) => {
    const path = newPath('spec', 'taints').index(i);
    if (!t.key) errs.push(required(path.child('key'), ''));
    if (!t.effect) errs.push(required(path.child('effect'), ''));
    else if (!taintEffects.includes(t.effect)) errs.push(notSupported(path.child('effect'), t.effect, taintEffects));
    const k = `${t.key}:${t.effect}`;
    if (seen.has(k)) errs.push(invalid(path, t, 'taints must be unique by key and effect pair'));
    seen.add(k);
  });
  return errs;
}

function validateNode(o: KubeObject): FieldError[] {
  const meta = o.metadata ?? {};
  const path = newPath('metadata');
  const errs: FieldError[] = [];
  if (!meta.name) errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...isDNS1123Subdomain(meta.name).map((detail) => invalid(path.child('name'), meta.name, detail)));
  errs.push(...validateLabels(meta.labels, path.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')));
  errs.push(...validateTaints((o as { spec?: { taints?: Taint[] } }).spec?.taints));
  return errs;
}

export const nodeStrategy: ObjectStrategy = {
  kind: 'Node',
  resource: 'nodes',
  apiVersion: 'v1',
  namespaced: false,
  schemaType: 'core/v1.Node',
  schema: nodeSchema,
  statusSubresource: true,
  initialStatus: () => ({ daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: {} }),
  validate: validateNode,
  validateUpdate: (next) => validateTaints((next as { spec?: { taints?: Taint[] } }).spec?.taints),
};
