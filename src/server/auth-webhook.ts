// Bearer tokens and authorisation on the kubelet port through the API server, as the kubelet's
// webhook authenticator and authorizer: a TokenReview names the token's user (cached 2 min), a
// SubjectAccessReview decides each request (allowed cached 5 min, denied 30 s). The API call itself
// is passed in (the node's client), so this layer knows only the review objects.

import type { Clock } from '../util/clock.js';
import type { UserInfo } from './x509-auth.js';

/** POSTs an object to an API path and resolves to the API server's answer. */
export type ReviewPost = (path: string, body: unknown) => Promise<unknown>;

/** The attributes the kubelet authorises a request with (a resource request on its Node). */
export interface KubeletRequestAttributes {
  verb: string;
  resource: 'nodes';
  subresource: string;
  name: string;
  apiVersion: 'v1';
  path: string;
}

export interface Decision {
  allowed: boolean;
  reason?: string;
}

class TTLCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(
    private readonly clock: Clock,
    private readonly max = 4096,
  ) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, until: this.clock.now() + ttlMs });
  }
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

/** Authenticates bearer tokens with TokenReview (authentication.k8s.io/v1). */
export class TokenReviewAuthenticator {
  private readonly cache: TTLCache<UserInfo | null>;

  constructor(
    private readonly post: ReviewPost,
    clock: Clock,
    private readonly ttlMs = 120_000,
  ) {
    this.cache = new TTLCache(clock);
  }

  /** The token's user, or undefined when the API server says it is not authenticated. Throws when it cannot be asked. */
  async authenticate(token: string): Promise<UserInfo | undefined> {
    const hit = this.cache.get(token);
    if (hit !== undefined) return hit ?? undefined;
    const res = (await this.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    })) as { status?: TokenReviewStatus };
    const st = res?.status ?? {};
    const user =
      st.authenticated && st.user?.username
        ? {
            username: st.user.username,
            groups: st.user.groups ?? [],
            ...(st.user.uid ? { uid: st.user.uid } : {}),
            ...(st.user.extra ? { extra: st.user.extra } : {}),
          }
        : null;
    this.cache.set(token, user, this.ttlMs);
    return user ?? undefined;
  }
}

/** Authorises requests with SubjectAccessReview (authorization.k8s.io/v1). */
export class SubjectAccessReviewAuthorizer {
  private readonly cache: TTLCache<Decision>;

  constructor(
    private readonly post: ReviewPost,
    clock: Clock,
    private readonly allowedTtlMs = 300_000,
    private readonly deniedTtlMs = 30_000,
  ) {
    this.cache = new TTLCache(clock);
  }

  async authorize(user: UserInfo, a: KubeletRequestAttributes): Promise<Decision> {
    const spec = {
      user: user.username,
      groups: user.groups,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.extra ? { extra: user.extra } : {}),
      resourceAttributes: { verb: a.verb, version: a.apiVersion, resource: a.resource, subresource: a.subresource, name: a.name },
    };
    const key = JSON.stringify(spec);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const res = (await this.post('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec,
    })) as { status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string } };
    const st = res?.status ?? {};
    const d: Decision = { allowed: st.allowed === true && st.denied !== true, ...(st.reason ? { reason: st.reason } : {}) };
    this.cache.set(key, d, d.allowed ? this.allowedTtlMs : this.deniedTtlMs);
    return d;
  }
}
