// Bound service-account tokens: the claims a TokenRequest gets (pkg/serviceaccount/claims.go Claims:
// iss, sub, aud, exp, iat, nbf, jti and the private `kubernetes.io` claim naming the namespace, the
// account and the object the token is bound to), and their authentication (the Validator of the same
// file, behind the API server's JWT token authenticator): a token signed by the agent's key, for one
// of the audiences asked, not expired (with go-jose's one minute of leeway), whose account still
// exists with the uid it names and, when bound to a pod, whose pod still exists with its uid and was
// not deleted more than a minute ago. The identity is the account's user: system:serviceaccount:NS:NAME
// with its groups and, for a pod-bound token, the pod's name and uid as extra.

import { randomUUID } from 'node:crypto';
import type { Pod } from '../../api/types.js';
import { serviceAccountGroups, serviceAccountUsername, type ServiceAccount } from '../../api/service-account.js';
import type { UserInfo } from '../../http/router.js';
import { JwtSigner, looksLikeJwt } from './jwt.js';

/** The issuer and audience of the API's own tokens (kube-apiserver's --service-account-issuer as kubeadm sets it). */
export const defaultIssuer = 'https://kubernetes.default.svc.cluster.local';

/** go-jose's DefaultLeeway for exp, nbf and iat. */
const leewaySeconds = 60;

/** How long a bound pod's token stays valid after the pod's deletion began. */
const deletedPodGraceSeconds = 60;

export const podNameExtra = 'authentication.kubernetes.io/pod-name';
export const podUidExtra = 'authentication.kubernetes.io/pod-uid';
export const credentialIdExtra = 'authentication.kubernetes.io/credential-id';

export interface KubernetesClaim {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
}

export interface ServiceAccountClaims {
  aud: string[];
  exp: number;
  iat: number;
  iss: string;
  jti: string;
  'kubernetes.io': KubernetesClaim;
  nbf: number;
  sub: string;
}

export interface TokenIssue {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  audiences: readonly string[];
  expirationSeconds: number;
  /** The object the token is bound to (its validity ends with it). */
  pod?: { name: string; uid: string };
}

export interface IssuedToken {
  token: string;
  /** RFC 3339, seconds. */
  expirationTimestamp: string;
  claims: ServiceAccountClaims;
}

export type TokenAuthentication = { user: UserInfo; audiences: string[] } | { error: string };

export interface ServiceAccountTokensOptions {
  signer: JwtSigner;
  /** ms since epoch. */
  now(): number;
  serviceAccount(namespace: string, name: string): ServiceAccount | undefined;
  pod(namespace: string, name: string): Pod | undefined;
  issuer?: string;
  /** The audiences the API accepts (default: the issuer). */
  apiAudiences?: readonly string[];
  /** The token ID (jti); random UUIDs unless given. */
  newId?(): string;
}

const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class ServiceAccountTokens {
  readonly issuer: string;
  readonly apiAudiences: readonly string[];

  constructor(private readonly o: ServiceAccountTokensOptions) {
    this.issuer = o.issuer ?? defaultIssuer;
    this.apiAudiences = o.apiAudiences ?? [this.issuer];
  }

  /** Claims(): the claims of a new token for the request, issued now. */
  /** The clock the tokens are issued and checked on (ms since epoch). */
  now(): number {
    return this.o.now();
  }

  claims(req: TokenIssue): ServiceAccountClaims {
    const now = Math.floor(this.o.now() / 1000);
    const k8s: KubernetesClaim = { namespace: req.namespace, serviceaccount: { ...req.serviceAccount } };
    if (req.pod) k8s.pod = { ...req.pod };
    return {
      aud: req.audiences.length ? [...req.audiences] : [...this.apiAudiences],
      exp: now + req.expirationSeconds,
      iat: now,
      iss: this.issuer,
      jti: this.o.newId?.() ?? randomUUID(),
      'kubernetes.io': k8s,
      nbf: now,
      sub: serviceAccountUsername(req.namespace, req.serviceAccount.name),
    };
  }

  issue(req: TokenIssue): IssuedToken {
    const claims = this.claims(req);
    return { token: this.o.signer.sign(claims), expirationTimestamp: rfc3339(claims.exp), claims };
  }

  /** The user a token authenticates as for one of the audiences (the API's by default), or why it does not. */
  authenticate(token: string, audiences: readonly string[] = this.apiAudiences): TokenAuthentication {
    if (!looksLikeJwt(token)) return { error: 'invalid bearer token' };
    const raw = this.o.signer.verify(token);
    if (!raw || raw.iss !== this.issuer) return { error: 'invalid bearer token' };
    const claims = raw as unknown as Partial<ServiceAccountClaims>;
    const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a) => typeof a === 'string') : [];
    const matched = audiences.filter((a) => aud.includes(a));
    if (matched.length === 0) return { error: 'token audiences ' + JSON.stringify(aud) + ' is invalid for the target audiences ' + JSON.stringify(audiences) };
    const now = this.o.now() / 1000;
    if (typeof claims.exp !== 'number' || now - leewaySeconds > claims.exp) return { error: 'service account token has expired' };
    if (typeof claims.nbf === 'number' && now + leewaySeconds < claims.nbf) return { error: 'service account token is not valid yet' };
    if (typeof claims.iat === 'number' && now + leewaySeconds < claims.iat) return { error: 'service account token is issued in the future' };
    const k8s = claims['kubernetes.io'];
    const ns = k8s?.namespace;
    const saName = k8s?.serviceaccount?.name;
    const saUid = k8s?.serviceaccount?.uid;
    if (!ns || !saName || !saUid || claims.sub !== serviceAccountUsername(ns, saName)) return { error: 'service account token claims could not be validated' };
    const sa = this.o.serviceAccount(ns, saName);
    if (!sa || sa.metadata?.deletionTimestamp) return { error: `service account ${ns}/${saName} has been deleted` };
    if (sa.metadata?.uid !== saUid) return { error: `service account UID (${saUid}) does not match claim (${sa.metadata?.uid ?? ''})` };
    const extra: Record<string, string[]> = {};
    if (k8s.pod) {
      const pod = this.o.pod(ns, k8s.pod.name);
      if (!pod) return { error: `pod ${ns}/${k8s.pod.name} has been deleted` };
      if (pod.metadata?.uid !== k8s.pod.uid) return { error: `pod UID (${pod.metadata?.uid ?? ''}) does not match claim (${k8s.pod.uid})` };
      const deleted = pod.metadata?.deletionTimestamp;
      if (deleted && Date.parse(deleted) / 1000 < now - deletedPodGraceSeconds) return { error: 'service account token has been invalidated' };
      extra[podNameExtra] = [k8s.pod.name];
      extra[podUidExtra] = [k8s.pod.uid];
    }
    if (typeof claims.jti === 'string' && claims.jti) extra[credentialIdExtra] = [`JTI=${claims.jti}`];
    return {
      user: { username: serviceAccountUsername(ns, saName), uid: saUid, groups: serviceAccountGroups(ns), extra },
      audiences: matched,
    };
  }
}
