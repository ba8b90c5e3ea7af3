// The kubelet's service-account token manager (pkg/kubelet/token/token_manager.go): the tokens of
// pods' projected serviceAccountToken sources, requested for the pod's account bound to the pod and
// cached per (pod, audience, lifetime); a cached token is requested again once 80% of its lifetime
// has passed (less a jitter of up to 10 s), or 24 hours after it was issued, and expired tokens leave
// the cache. The volume manager writes a new token into the volume on the pod's next sync.

import type { Pod } from '../api/types.js';
import type { Clock } from '../util/clock.js';

/** ServiceAccountTokenProjection's default lifetime (v1 defaulting). */
export const defaultTokenExpirationSeconds = 3600;
const maxTTLMs = 24 * 3600_000;
const maxJitterMs = 10_000;

export interface TokenSource {
  audience?: string;
  expirationSeconds?: number;
}

/** What the token manager asks for: the TokenRequest of the pod's account, bound to the pod. */
export type TokenRequester = (
  pod: Pod,
  source: Required<Pick<TokenSource, 'expirationSeconds'>> & Pick<TokenSource, 'audience'>,
) => {
  token: string;
  /** ms since epoch. */
  expiresAt: number;
};

interface Cached {
  token: string;
  expiresAt: number;
  lifetimeMs: number;
  jitterMs: number;
}

export class TokenManager {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly clock: Clock,
    private readonly request: TokenRequester,
    private readonly random: () => number = Math.random,
  ) {}

  /** GetServiceAccountToken: the cached token while fresh, else a new one. */
  token(pod: Pod, source: TokenSource): string {
    const expirationSeconds = source.expirationSeconds ?? defaultTokenExpirationSeconds;
    const key = JSON.stringify([
      pod.metadata?.namespace ?? '',
      pod.spec?.serviceAccountName ?? '',
      pod.metadata?.uid ?? '',
      source.audience ?? '',
      expirationSeconds,
    ]);
    const now = this.clock.now();
    this.cleanup(now);
    const cached = this.cache.get(key);
    if (cached && !this.requiresRefresh(cached, now)) return cached.token;
    const issued = this.request(pod, { expirationSeconds, ...(source.audience ? { audience: source.audience } : {}) });
    this.cache.set(key, { ...issued, lifetimeMs: expirationSeconds * 1000, jitterMs: Math.floor(this.random() * maxJitterMs) });
    return issued.token;
  }

  /** DeleteServiceAccountToken: a pod's tokens leave the cache when the pod does. */
  forgetPod(podUid: string): void {
    for (const k of [...this.cache.keys()]) if ((JSON.parse(k) as string[])[2] === podUid) this.cache.delete(k);
  }

  /** requiresRefresh: past 80% of the lifetime (less the jitter), or past the 24 h cap since issued. */
  private requiresRefresh(c: Cached, now: number): boolean {
    const issuedAt = c.expiresAt - c.lifetimeMs;
    if (now > issuedAt + maxTTLMs - c.jitterMs) return true;
    return now > c.expiresAt - c.lifetimeMs * 0.2 - c.jitterMs;
  }

  private cleanup(now: number): void {
    for (const [k, c] of this.cache) if (c.expiresAt <= now) this.cache.delete(k);
  }
}
