// The standalone agent's service-account tokens, put together: the signer over the root dir's key,
// the issuer and authenticator (kubeapi/serviceaccount/tokens.ts) over the stored ServiceAccounts and
// the registry's pods, the kubelet's token manager requesting tokens for pods' projected volumes, and
// the object lookup the kubelet is given with that token source added.

import type { Pod } from '../api/types.js';
import type { ServiceAccount } from '../api/service-account.js';
import { JwtSigner } from '../kubeapi/serviceaccount/jwt.js';
import { ServiceAccountTokens } from '../kubeapi/serviceaccount/tokens.js';
import type { ObjectLookup } from '../kuberuntime/envvars.js';
import { TokenManager } from '../kubelet/token-manager.js';
import type { Clock } from '../util/clock.js';
import type { ObjectStore } from './object-store.js';

export interface AgentTokens {
  tokens: ServiceAccountTokens;
  manager: TokenManager;
  /** The kubelet's lookup: the store's objects and the pods' tokens. */
  lookup: ObjectLookup;
}

export function agentTokens(opts: {
  key: string;
  clock: Clock;
  objects: ObjectStore;
  base: ObjectLookup;
  pod(namespace: string, name: string): Pod | undefined;
}): AgentTokens {
  const { objects, clock } = opts;
  const account = (ns: string, name: string) => objects.get('ServiceAccount', ns, name) as ServiceAccount | undefined;
  const tokens = new ServiceAccountTokens({ signer: new JwtSigner(opts.key), now: () => clock.now(), serviceAccount: account, pod: opts.pod });
  const manager = new TokenManager(clock, (pod, source) => {
    const ns = pod.metadata?.namespace || 'default';
    const name = pod.spec?.serviceAccountName || 'default';
    const sa = account(ns, name);
    if (!sa) throw new Error(`failed to fetch token: serviceaccounts ${JSON.stringify(name)} not found`);
    const issued = tokens.issue({
      namespace: ns,
      serviceAccount: { name, uid: sa.metadata?.uid ?? '' },
      audiences: source.audience ? [source.audience] : tokens.apiAudiences,
      expirationSeconds: source.expirationSeconds,
      pod: { name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
    });
    return { token: issued.token, expiresAt: issued.claims.exp * 1000 };
  });
  // The base lookup's every answer, with the pods' tokens beside them.
  const base = opts.base;
  const lookup: ObjectLookup = {
    configMap: (ns, n) => base.configMap(ns, n),
    secret: (ns, n) => base.secret(ns, n),
    ...(base.services ? { services: (ns: string) => base.services!(ns) } : {}),
    ...(base.persistentVolumeClaim ? { persistentVolumeClaim: (ns: string, n: string) => base.persistentVolumeClaim!(ns, n) } : {}),
    ...(base.persistentVolume ? { persistentVolume: (n: string) => base.persistentVolume!(n) } : {}),
    ...(base.runtimeClass ? { runtimeClass: (n: string) => base.runtimeClass!(n) } : {}),
    serviceAccountToken: (pod, source) => manager.token(pod, source),
  };
  return { tokens, manager, lookup };
}
