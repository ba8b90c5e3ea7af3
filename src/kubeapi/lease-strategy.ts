// How a coordination.k8s.io/v1 Lease is kept by the object store (pkg/registry/coordination/lease
// and pkg/apis/coordination/validation ValidateLease): its schema for strict decoding and the
// validation of its metadata and spec. The node agent's heartbeat Lease in kube-node-lease is one.

import type { FieldError } from '../api/field-errors.js';
import { invalid, newPath } from '../api/field-errors.js';
import { apiSchema, type Schema } from '../api/schema.js';
import { validateObjectMeta } from '../api/validation/pod.js';
import type { KubeObject, ObjectStrategy } from './backend.js';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;

/** The API schema with coordination/v1 Lease (the generated schema holds the workload kinds only). */
const leaseSchema: Schema = {
  source: apiSchema.source,
  types: {
    ...apiSchema.types,
    'coordination/v1.Lease': {
      fields: {
        apiVersion: str,
        kind: str,
        metadata: { type: 'object', ref: 'meta/v1.ObjectMeta' },
        spec: { type: 'object', ref: 'coordination/v1.LeaseSpec' },
      },
    },
    'coordination/v1.LeaseSpec': {
      fields: {
        holderIdentity: str,
        leaseDurationSeconds: int,
        acquireTime: str,
        renewTime: str,
        leaseTransitions: int,
        strategy: str,
        preferredHolder: str,
      },
    },
  },
};

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** ValidateLeaseSpec: a duration above 0 and transitions not below 0 when set. */
function validateLease(o: KubeObject): FieldError[] {
  const errs = validateObjectMeta(o.metadata);
  const spec = (o as { spec?: LeaseSpec }).spec ?? {};
  const path = newPath('spec');
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0)
    errs.push(invalid(path.child('leaseDurationSeconds'), spec.leaseDurationSeconds, 'must be greater than 0'));
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0)
    errs.push(invalid(path.child('leaseTransitions'), spec.leaseTransitions, 'must be greater than or equal to 0'));
  return errs;
}

export const leaseStrategy: ObjectStrategy = {
  kind: 'Lease',
  resource: 'leases',
  apiVersion: 'coordination.k8s.io/v1',
  namespaced: true,
  schemaType: 'coordination/v1.Lease',
  schema: leaseSchema,
  validate: validateLease,
  validateUpdate: (next) => validateLease(next),
};
