// The answers of authorization.k8s.io/v1's reviews (pkg/registry/authorization): a
// SubjectAccessReview (of the user the spec names), SelfSubjectAccessReview and
// LocalSubjectAccessReview (of the requester or in a namespace) are the authorizer's decision on the
// attributes of the spec (authorizationutil ResourceAttributesFrom / NonResourceAttributesFrom); a
// SelfSubjectRulesReview lists the RBAC rules that apply to the requester in a namespace (the
// privileged group lists none of its own: system:masters has cluster-admin's), incomplete with the errors met.

import type { NonResourceRule, SubjectAccessReviewSpec, SubjectAccessReviewStatus } from 'kubernetes-types/authorization/v1.js';
import type { UserInfo } from '../../http/router.js';
import type { Attributes } from './attributes.js';
import { authorize } from './authorizer.js';
import { rulesFor, type RbacSource } from './rule-resolver.js';

/** authorization/v1 ResourceRule (kubernetes-types' declaration lacks verbs and resources). */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

/** authorization/v1 SubjectRulesReviewStatus. */
export interface SubjectRulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  evaluationError?: string;
}

/** The attributes of a review's spec for a user. */
export function reviewAttributes(user: UserInfo, spec: Omit<SubjectAccessReviewSpec, 'user' | 'groups' | 'uid' | 'extra'>): Attributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      verb: r.verb ?? '',
      resourceRequest: true,
      path: '',
      apiGroup: r.group ?? '',
      apiVersion: r.version ?? '',
      namespace: r.namespace ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource ?? '',
      name: r.name ?? '',
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return {
    user,
    verb: n.verb ?? '',
    resourceRequest: false,
    path: n.path ?? '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

/** A SubjectAccessReview's status: allowed, and the reason when there is one. */
export function accessReviewStatus(src: RbacSource, a: Attributes): SubjectAccessReviewStatus {
  const d = authorize(src, a);
  return { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
}

function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

/** A SelfSubjectRulesReview's status for a user in a namespace. */
export function rulesReviewStatus(src: RbacSource, user: UserInfo, namespace: string): SubjectRulesReviewStatus {
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  const { rules, errors } = rulesFor(src, user, namespace);
  for (const r of rules) {
    if (r.nonResourceURLs?.length) {
      nonResourceRules.push({ verbs: [...(r.verbs ?? [])], nonResourceURLs: [...r.nonResourceURLs] });
      continue;
    }
    resourceRules.push({
      verbs: [...(r.verbs ?? [])],
      ...(r.apiGroups?.length ? { apiGroups: [...r.apiGroups] } : {}),
      ...(r.resources?.length ? { resources: [...r.resources] } : {}),
      ...(r.resourceNames?.length ? { resourceNames: [...r.resourceNames] } : {}),
    });
  }
  return { resourceRules, nonResourceRules, incomplete: errors.length > 0, ...(errors.length ? { evaluationError: aggregate(errors) } : {}) };
}
