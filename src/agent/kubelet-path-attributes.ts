// The RBAC attributes of the kubelet's own paths served beside the API on the agent's listeners
// (/pods, /stats, /metrics, /containerLogs, /exec…, and the agent's /podvisor/v1/*): the node's
// subresources as the kubelet authorizes them (server/auth.go GetRequestAttributes: nodes/proxy,
// nodes/stats, nodes/metrics, nodes/log, nodes/spec, the node's name).

import type { UserInfo } from '../http/router.js';
import type { Attributes } from '../kubeapi/rbac/attributes.js';
import { kubeletRequestAttributes } from '../server/kubelet-auth.js';

export function kubeletPathAttributes(user: UserInfo, method: string, path: string, nodeName: string): Attributes {
  const k = kubeletRequestAttributes(method, path, nodeName);
  return {
    user,
    verb: k.verb,
    resourceRequest: true,
    path,
    apiGroup: '',
    apiVersion: 'v1',
    namespace: '',
    resource: k.resource,
    subresource: k.subresource,
    name: k.name,
  };
}
