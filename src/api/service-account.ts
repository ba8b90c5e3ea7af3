// core/v1 ServiceAccount: its type, the API server's validation (ValidateServiceAccount: the object
// meta of a namespaced object whose name is a DNS subdomain) and the names its tokens authenticate as
// (pkg/serviceaccount/util.go MakeUsername, MakeGroupNames).
// Upstream: pkg/apis/core/validation ValidateServiceAccount, k8s.io/apiserver/pkg/authentication/serviceaccount.

import type { ObjectMeta, ObjectReference } from './types.js';
import type { LocalObjectReference } from 'kubernetes-types/core/v1.js';
import type { FieldError } from './field-errors.js';
import { validateObjectMeta } from './validation/pod.js';

export interface ServiceAccount {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  secrets?: ObjectReference[];
  imagePullSecrets?: LocalObjectReference[];
  automountServiceAccountToken?: boolean;
}

/** The account every namespace has (the ServiceAccount controller's) and pods name when they name none. */
export const defaultServiceAccountName = 'default';

/** ValidateServiceAccount: namespaced object meta, the name a DNS subdomain. */
export function validateServiceAccount(sa: ServiceAccount): FieldError[] {
  return validateObjectMeta(sa.metadata);
}

const usernamePrefix = 'system:serviceaccount:';

/** MakeUsername: `system:serviceaccount:<namespace>:<name>`. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${usernamePrefix}${namespace}:${name}`;
}

/** SplitUsername: the namespace and name a service account's username names, or undefined. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(usernamePrefix)) return undefined;
  const parts = username.slice(usernamePrefix.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

/** MakeGroupNames with the authenticated group: every account's, its namespace's, and system:authenticated. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
}
