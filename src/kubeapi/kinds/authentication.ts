// The resource table's rows for authentication.k8s.io/v1: TokenReview (create: who a bearer token
// authenticates as, for the audiences asked) and SelfSubjectReview (create: who the caller is, as
// `kubectl auth whoami` asks). Neither is stored: create answers with the object and its status.
// Upstream: pkg/registry/authentication/tokenreview, pkg/registry/authentication/selfsubjectreview.

import type { UserInfo } from '../../http/router.js';
import { invalid } from '../../http/status.js';
import type { CreateOptions, KubeBackend, KubeObject, Storage } from '../backend.js';
import { resource } from '../resource-def.js';

interface TokenReview extends KubeObject {
  spec?: { token?: string; audiences?: string[] };
  status?: { authenticated?: boolean; user?: UserInfo; audiences?: string[]; error?: string };
}

/** The user as the API writes it (uid and extra only when set). */
function userInfoObject(u: UserInfo): UserInfo {
  return {
    username: u.username,
    ...(u.uid ? { uid: u.uid } : {}),
    groups: [...u.groups],
    ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
  };
}

/** A kind served by create alone: nothing is listed, got or kept. */
function createOnly(create: (obj: KubeObject, opts: CreateOptions) => KubeObject): Storage {
  return {
    list: () => ({ items: [] }),
    get: () => undefined,
    create: (obj, opts) => Promise.resolve(create(obj, opts)),
  };
}

function tokenReviewStorage(b: KubeBackend): Storage | undefined {
  const tokens = b.serviceAccountTokens;
  if (!tokens) return undefined;
  return createOnly((obj) => {
    const tr = obj as TokenReview;
    const token = tr.spec?.token;
    if (!token)
      throw invalid('TokenReview.authentication.k8s.io', tr.metadata?.name ?? '', [{ type: 'Required', field: 'spec.token', detail: 'token cannot be empty' }]);
    const audiences = tr.spec?.audiences?.length ? tr.spec.audiences : [...tokens.apiAudiences];
    const r = tokens.authenticate(token, audiences);
    const status = 'user' in r ? { authenticated: true, user: userInfoObject(r.user), audiences: r.audiences } : { user: {} as UserInfo, error: r.error };
    return { ...tr, metadata: { ...tr.metadata, creationTimestamp: undefined }, status } as KubeObject;
  });
}

function selfSubjectReviewStorage(): Storage {
  return createOnly((obj, opts) => {
    const user = opts.user ?? { username: 'system:anonymous', groups: ['system:unauthenticated'] };
    return { ...obj, metadata: { ...obj.metadata, creationTimestamp: undefined }, status: { userInfo: userInfoObject(user) } } as KubeObject;
  });
}

export const tokenReviews = resource({
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'TokenReview',
  resource: 'tokenreviews',
  singular: 'tokenreview',
  namespaced: false,
  verbs: ['create'],
  storage: tokenReviewStorage,
});

export const selfSubjectReviews = resource({
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'SelfSubjectReview',
  resource: 'selfsubjectreviews',
  singular: 'selfsubjectreview',
  namespaced: false,
  verbs: ['create'],
  storage: () => selfSubjectReviewStorage(),
});
