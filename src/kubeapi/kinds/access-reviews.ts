// The resource table's rows for authorization.k8s.io/v1's reviews: SelfSubjectAccessReview,
// SelfSubjectRulesReview, SubjectAccessReview and LocalSubjectAccessReview, create-only and never stored
// (pkg/registry/authorization/*): the created object comes back with its status, the authorizer's answer
// for the requester (self), the spec's user and groups, or the spec in the request's namespace (local).
// `kubectl auth can-i [--list]` reads them.

import type {
  LocalSubjectAccessReview,
  SelfSubjectAccessReview,
  SelfSubjectRulesReview,
  SubjectAccessReview,
  SubjectAccessReviewSpec,
} from 'kubernetes-types/authorization/v1.js';
import { type FieldError, invalid as invalidField, newPath } from '../../api/field-errors.js';
import { anonymousUser, type UserInfo } from '../../http/router.js';
import { ApiError, invalid, methodNotAllowed } from '../../http/status.js';
import type { CreateOptions, KubeBackend, KubeObject, Storage } from '../backend.js';
import { storeRbacSource } from '../rbac/store-source.js';
import { accessReviewStatus, reviewAttributes, rulesReviewStatus } from '../rbac/reviews.js';
import { resource } from '../resource-def.js';
import type { RbacSource } from '../rbac/rule-resolver.js';

const group = 'authorization.k8s.io';

/** NonResourceAttributes as Go's %#v prints the internal type in a field error. */
function goNonResource(n: { path?: string; verb?: string }): { toString(): string } {
  const text = `authorization.NonResourceAttributes{Path:${JSON.stringify(n.path ?? '')}, Verb:${JSON.stringify(n.verb ?? '')}}`;
  return { toString: () => text };
}

/** ValidateSubjectAccessReviewSpec's first two rules: exactly one of the attribute kinds. */
function validateAttributes(spec: Partial<SubjectAccessReviewSpec>): FieldError[] {
  const path = newPath('spec');
  const errs: FieldError[] = [];
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    errs.push(
      invalidField(
        path.child('nonResourceAttributes'),
        goNonResource(spec.nonResourceAttributes),
        'cannot be specified in combination with resourceAttributes',
      ),
    );
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    errs.push(invalidField(path.child('resourceAttributes'), 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  }
  return errs;
}

/** A create-only storage answering each created review with `answer` (the requester in opts.user). */
function reviewStorage<T extends KubeObject>(answer: (obj: T, user: UserInfo, src: RbacSource) => T): (b: KubeBackend) => Storage {
  return (b) => {
    const src = storeRbacSource(b.objects);
    return {
      list: () => {
        throw methodNotAllowed();
      },
      get: () => undefined,
      create: (obj: KubeObject, opts: CreateOptions) => Promise.resolve(answer(obj as T, opts.user ?? anonymousUser, src)),
    };
  };
}

/**
 * The 422 of an invalid review, as the apiserver words it: the internal object it validates has no
 * kind, so the message reads `.authorization.k8s.io "" is invalid: …` and the details name the group alone.
 */
function checked(errs: FieldError[]): void {
  if (!errs.length) return;
  const e = invalid(`.${group}`, '', errs);
  throw new ApiError(422, 'Invalid', e.message, { group, ...(e.details?.causes ? { causes: e.details.causes } : {}) });
}

type Review<S> = KubeObject & { spec?: S; status?: unknown };

const selfSubjectAccessReviews = resource({
  group,
  version: 'v1',
  kind: 'SelfSubjectAccessReview',
  resource: 'selfsubjectaccessreviews',
  singular: 'selfsubjectaccessreview',
  namespaced: false,
  verbs: ['create'],
  storage: reviewStorage<Review<SelfSubjectAccessReview['spec']>>((o, user, src) => {
    const spec = o.spec ?? {};
    checked(validateAttributes(spec));
    return { ...o, status: accessReviewStatus(src, reviewAttributes(user, spec)) };
  }),
});

const selfSubjectRulesReviews = resource({
  group,
  version: 'v1',
  kind: 'SelfSubjectRulesReview',
  resource: 'selfsubjectrulesreviews',
  singular: 'selfsubjectrulesreview',
  namespaced: false,
  verbs: ['create'],
  storage: reviewStorage<Review<SelfSubjectRulesReview['spec']>>((o, user, src) => ({
    ...o,
    status: rulesReviewStatus(src, user, o.spec?.namespace ?? ''),
  })),
});

/** The user a SubjectAccessReview's spec names. */
function specUser(spec: SubjectAccessReviewSpec): UserInfo {
  return {
    username: spec.user ?? '',
    groups: spec.groups ?? [],
    ...(spec.uid ? { uid: spec.uid } : {}),
    ...(spec.extra ? { extra: spec.extra } : {}),
  };
}

function validateSubject(spec: SubjectAccessReviewSpec): FieldError[] {
  if (spec.user || spec.groups?.length) return [];
  return [invalidField(newPath('spec', 'user'), spec.user ?? '', 'at least one of user or group must be specified')];
}

const subjectAccessReviews = resource({
  group,
  version: 'v1',
  kind: 'SubjectAccessReview',
  resource: 'subjectaccessreviews',
  singular: 'subjectaccessreview',
  namespaced: false,
  verbs: ['create'],
  storage: reviewStorage<Review<SubjectAccessReview['spec']>>((o, _user, src) => {
    const spec = o.spec ?? {};
    checked([...validateAttributes(spec), ...validateSubject(spec)]);
    return { ...o, status: accessReviewStatus(src, reviewAttributes(specUser(spec), spec)) };
  }),
});

const localSubjectAccessReviews = resource({
  group,
  version: 'v1',
  kind: 'LocalSubjectAccessReview',
  resource: 'localsubjectaccessreviews',
  singular: 'localsubjectaccessreview',
  namespaced: true,
  verbs: ['create'],
  storage: reviewStorage<Review<LocalSubjectAccessReview['spec']>>((o, _user, src) => {
    const spec = o.spec ?? {};
    const namespace = o.metadata?.namespace ?? '';
    const errs = [...validateAttributes(spec), ...validateSubject(spec)];
    if (spec.nonResourceAttributes)
      errs.push(invalidField(newPath('spec', 'nonResourceAttributes'), goNonResource(spec.nonResourceAttributes), 'disallowed on this kind of request'));
    if (spec.resourceAttributes && spec.resourceAttributes.namespace !== namespace) {
      errs.push(invalidField(newPath('spec', 'resourceAttributes', 'namespace'), spec.resourceAttributes.namespace ?? '', 'must match metadata.namespace'));
    }
    checked(errs);
    return { ...o, status: accessReviewStatus(src, reviewAttributes(specUser(spec), spec)) };
  }),
});

export const accessReviewResources = [localSubjectAccessReviews, selfSubjectAccessReviews, selfSubjectRulesReviews, subjectAccessReviews];
