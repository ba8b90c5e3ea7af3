// The agent's authorizer: members of system:masters are allowed everything (the apiserver's
// privileged-group authorizer), everyone else is decided by RBAC (plugin/pkg/auth/authorizer/rbac
// RBACAuthorizer: allowed when a rule that applies allows the request; otherwise no opinion, with the
// errors met as the reason). A refusal is upstream's 403 Forbidden (responsewriters.Forbidden over
// apierrors.NewForbidden).

import { ApiError } from '../../http/status.js';
import type { UserInfo } from '../../http/router.js';
import type { Attributes } from './attributes.js';
import { visitRulesFor, type RbacSource } from './rule-resolver.js';
import { ruleAllows } from './rules.js';

export const privilegedGroup = 'system:masters';

export interface Decision {
  allowed: boolean;
  /** Why: the binding that allowed it, or the errors met when nothing did ('' when none). */
  reason: string;
}

export function isPrivileged(user: UserInfo): boolean {
  return user.groups.includes(privilegedGroup);
}

/** utilerrors.NewAggregate(errs).Error(): one message alone, several in brackets. */
function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

/** RBACAuthorizer.Authorize. */
export function rbacAuthorize(src: RbacSource, a: Attributes): Decision {
  let allowedBy: string | undefined;
  const errors: string[] = [];
  visitRulesFor(src, a.user, a.namespace, (v) => {
    if ('error' in v) {
      errors.push(v.error);
      return true;
    }
    if (!ruleAllows(a, v.rule)) return true;
    allowedBy = v.source.describe();
    return false;
  });
  if (allowedBy !== undefined) return { allowed: true, reason: `RBAC: allowed by ${allowedBy}` };
  return { allowed: false, reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
}

/** The union of the privileged group and RBAC. */
export function authorize(src: RbacSource, a: Attributes): Decision {
  if (isPrivileged(a.user)) return { allowed: true, reason: '' };
  return rbacAuthorize(src, a);
}

/** forbiddenMessage. */
function forbiddenMessage(a: Attributes): string {
  const user = JSON.stringify(a.user.username);
  if (!a.resourceRequest) return `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
}

/** The 403 refusing a request (responsewriters.Forbidden): `pods "x" is forbidden: User … cannot …[: reason]`. */
export function forbidden(a: Attributes, reason: string): ApiError {
  const why = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
  if (!a.resourceRequest || !a.resource) return new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
  const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
  const subject = a.name ? `${qualified} ${JSON.stringify(a.name)}` : qualified;
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, {
    ...(a.name ? { name: a.name } : {}),
    ...(a.apiGroup ? { group: a.apiGroup } : {}),
    kind: a.resource,
  });
}
