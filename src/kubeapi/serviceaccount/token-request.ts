// serviceaccounts/token: POST an authentication.k8s.io/v1 TokenRequest, answered with the request
// (its spec defaulted: one hour, the API's audiences) and status {token, expirationTimestamp}; the
// token bound to the account and, when the request names one, to a Pod of the namespace that runs
// as that account. `kubectl create token` is its client.
// Upstream: pkg/registry/core/serviceaccount/storage/token.go, pkg/apis/authentication/validation.

import type { Pod } from '../../api/types.js';
import type { ServiceAccount } from '../../api/service-account.js';
import type { FieldError } from '../../api/field-errors.js';
import { readObjectBody } from '../../http/body.js';
import { sendObject } from '../../http/negotiate.js';
import { ApiError, badRequest, conflict, invalid, notFound } from '../../http/status.js';
import type { KubeObject } from '../backend.js';
import type { ConnectSubresource } from '../resource-def.js';
import type { TokenIssue } from './tokens.js';

export const authenticationGroupVersion = 'authentication.k8s.io/v1';

/** The default and bounds of spec.expirationSeconds. */
const defaultExpirationSeconds = 3600;
const minExpirationSeconds = 600;
const maxExpirationSeconds = 2 ** 32;

export interface BoundObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

export interface TokenRequest extends KubeObject {
  spec?: { audiences?: string[] | null; expirationSeconds?: number | null; boundObjectRef?: BoundObjectReference | null };
  status?: { token: string; expirationTimestamp: string };
}

/** ValidateTokenRequest. */
function validateTokenRequest(tr: TokenRequest): FieldError[] {
  const errs: FieldError[] = [];
  const exp = tr.spec?.expirationSeconds;
  if (typeof exp !== 'number' || !Number.isInteger(exp)) {
    errs.push({ type: 'Invalid', field: 'spec.expirationSeconds', value: exp ?? null, detail: 'must be an integer' });
  } else if (exp < minExpirationSeconds) {
    errs.push({ type: 'Invalid', field: 'spec.expirationSeconds', value: exp, detail: 'may not specify a duration less than 10 minutes' });
  } else if (exp > maxExpirationSeconds) {
    errs.push({ type: 'TooLong', field: 'spec.expirationSeconds', value: exp, detail: 'may not specify a duration larger than 2^32 seconds' });
  }
  return errs;
}

/** The body as a TokenRequest, its spec defaulted. */
function decodeTokenRequest(body: unknown, namespace: string, name: string): TokenRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a TokenRequest object');
  const tr = structuredClone(body) as TokenRequest;
  if (tr.kind !== undefined && tr.kind !== 'TokenRequest') throw badRequest(`the kind ${JSON.stringify(tr.kind)} is not TokenRequest`);
  if (tr.apiVersion !== undefined && tr.apiVersion !== authenticationGroupVersion)
    throw badRequest(`the API version in the data (${tr.apiVersion}) does not match the expected API version (${authenticationGroupVersion})`);
  const spec = (tr.spec ??= {});
  spec.expirationSeconds ??= defaultExpirationSeconds;
  spec.audiences ??= [];
  tr.metadata = { ...tr.metadata, name, namespace };
  return { apiVersion: authenticationGroupVersion, kind: 'TokenRequest', ...tr };
}

export interface TokenRequestContext {
  now(): number;
  pod(namespace: string, name: string): Pod | undefined;
  issue(req: TokenIssue): { token: string; expirationTimestamp: string };
  apiAudiences: readonly string[];
}

/** TokenREST.Create: the token for the account (found already) and the request, or the refusal. */
export function createToken(sa: ServiceAccount, body: unknown, ctx: TokenRequestContext): TokenRequest {
  const namespace = sa.metadata?.namespace ?? 'default';
  const name = sa.metadata?.name ?? '';
  const tr = decodeTokenRequest(body, namespace, name);
  const errs = validateTokenRequest(tr);
  if (errs.length) throw invalid('TokenRequest.authentication.k8s.io', name, errs);
  const spec = tr.spec!;
  const issue: TokenIssue = {
    namespace,
    serviceAccount: { name, uid: sa.metadata?.uid ?? '' },
    audiences: spec.audiences?.length ? spec.audiences : ctx.apiAudiences,
    expirationSeconds: spec.expirationSeconds!,
  };
  const ref = spec.boundObjectRef;
  if (ref) {
    const group = (ref.apiVersion ?? '').includes('/') ? ref.apiVersion!.split('/')[0] : '';
    if (group !== '' || ref.kind !== 'Pod') {
      throw badRequest(
        `cannot bind token for serviceaccount ${JSON.stringify(name)} to object of kind ${JSON.stringify(`${ref.apiVersion ?? ''}, Kind=${ref.kind ?? ''}`)}: this server binds tokens to pods`,
      );
    }
    const pod = ctx.pod(namespace, ref.name ?? '');
    if (!pod) throw notFound('pods', ref.name ?? '');
    const uid = pod.metadata?.uid ?? '';
    if (ref.uid && ref.uid !== uid) {
      throw conflict(
        'Pod',
        ref.name ?? '',
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if ((pod.spec?.serviceAccountName || 'default') !== name) {
      throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`);
    }
    spec.boundObjectRef = { kind: 'Pod', apiVersion: 'v1', name: ref.name ?? '', uid };
    issue.pod = { name: ref.name ?? '', uid };
  }
  spec.audiences = [...issue.audiences];
  const { token, expirationTimestamp } = ctx.issue(issue);
  return {
    ...tr,
    metadata: { ...tr.metadata, creationTimestamp: new Date(ctx.now()).toISOString().replace(/\.\d{3}Z$/, 'Z') } as KubeObject['metadata'],
    status: { token, expirationTimestamp },
  };
}

/** The subresource of the ServiceAccount row. */
export const tokenSubresource: ConnectSubresource<ServiceAccount & KubeObject> = {
  kind: 'TokenRequest',
  verbs: ['create'],
  groupVersion: { group: 'authentication.k8s.io', version: 'v1' },
  async serve(r, backend) {
    const tokens = backend.serviceAccountTokens;
    if (!tokens) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const body = (await readObjectBody(r.req)).value;
    const out = createToken(r.object, body, {
      now: () => tokens.now(),
      pod: (ns, n) => backend.getPod(ns, n),
      issue: (req) => tokens.issue(req),
      apiAudiences: tokens.apiAudiences,
    });
    sendObject(r.req, r.res, 201, out);
  },
};
