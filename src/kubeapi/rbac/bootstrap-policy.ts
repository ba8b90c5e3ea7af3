// The RBAC bootstrap policy the API server creates at its start: the cluster roles and cluster role
// bindings of upstream's plugin/pkg/auth/authorizer/rbac/bootstrappolicy (policy.go ClusterRoles and
// ClusterRoleBindings, NamespaceRoles and NamespaceRoleBindings), as kube-apiserver 1.20 serves them,
// without the controllers' own roles (this
// agent's controllers run inside it). Each carries the label kubernetes.io/bootstrapping=rbac-defaults
// and the annotation rbac.authorization.kubernetes.io/autoupdate=true (added by bootstrap.ts).
// Aggregated roles (admin, edit, view) have an aggregationRule and get their rules from the roles it selects.

import type { AggregationRule, PolicyRule, Subject } from 'kubernetes-types/rbac/v1.js';

export interface BootstrapClusterRole {
  metadata: { name: string; labels?: Record<string, string> };
  rules?: PolicyRule[];
  aggregationRule?: AggregationRule;
}

export interface BootstrapClusterRoleBinding {
  metadata: { name: string };
  /** The ClusterRole bound. */
  roleRef: string;
  subjects?: Subject[];
}

export const bootstrapClusterRoles: readonly BootstrapClusterRole[] = [
  { metadata: { name: 'admin' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }] } },
  {
    metadata: { name: 'cluster-admin' },
    rules: [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ],
  },
  {
    metadata: { name: 'edit', labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }] },
  },
  {
    metadata: { name: 'system:aggregate-to-admin', labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } },
    rules: [
      { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['rolebindings', 'roles'],
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      },
    ],
  },
  {
    metadata: { name: 'system:aggregate-to-edit', labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } },
    rules: [
      {
        apiGroups: [''],
        resources: ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
      {
        apiGroups: [''],
        resources: ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'],
        verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'],
      },
      {
        apiGroups: [''],
        resources: [
          'configmaps',
          'endpoints',
          'persistentvolumeclaims',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'secrets',
          'serviceaccounts',
          'services',
          'services/proxy',
        ],
        verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'],
      },
      {
        apiGroups: ['apps'],
        resources: [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'replicasets',
          'replicasets/scale',
          'statefulsets',
          'statefulsets/scale',
        ],
        verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'],
      },
      { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'] },
      { apiGroups: ['batch'], resources: ['cronjobs', 'jobs'], verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'] },
      {
        apiGroups: ['extensions'],
        resources: [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'ingresses',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicationcontrollers/scale',
        ],
        verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'],
      },
      { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'] },
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'] },
    ],
  },
  {
    metadata: { name: 'system:aggregate-to-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
    rules: [
      {
        apiGroups: [''],
        resources: [
          'configmaps',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
        ],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: [''],
        resources: [
          'bindings',
          'events',
          'limitranges',
          'namespaces/status',
          'pods/log',
          'pods/status',
          'replicationcontrollers/status',
          'resourcequotas',
          'resourcequotas/status',
        ],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['apps'],
        resources: [
          'controllerrevisions',
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'statefulsets',
          'statefulsets/scale',
          'statefulsets/status',
        ],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['batch'], resources: ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['extensions'],
        resources: [
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'ingresses',
          'ingresses/status',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'replicationcontrollers/scale',
        ],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: ['policy'], resources: ['poddisruptionbudgets', 'poddisruptionbudgets/status'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'ingresses/status', 'networkpolicies'], verbs: ['get', 'list', 'watch'] },
    ],
  },
  {
    metadata: { name: 'system:auth-delegator' },
    rules: [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ],
  },
  {
    metadata: { name: 'system:basic-user' },
    rules: [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
      // `kubectl auth whoami` for every authenticated user (basicUserRules since SelfSubjectReview went GA).
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ],
  },
  {
    metadata: { name: 'system:discovery' },
    rules: [
      {
        nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'],
        verbs: ['get'],
      },
    ],
  },
  {
    metadata: { name: 'system:heapster' },
    rules: [
      { apiGroups: [''], resources: ['events', 'namespaces', 'nodes', 'pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['extensions'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
    ],
  },
  { metadata: { name: 'system:kube-aggregator' }, rules: [{ apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['get', 'list', 'watch'] }] },
  {
    metadata: { name: 'system:kube-controller-manager' },
    rules: [
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resourceNames: ['kube-controller-manager'], resources: ['leases'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['endpoints'], verbs: ['create'] },
      { apiGroups: [''], resourceNames: ['kube-controller-manager'], resources: ['endpoints'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['secrets', 'serviceaccounts'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['delete'] },
      { apiGroups: [''], resources: ['configmaps', 'namespaces', 'secrets', 'serviceaccounts'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets', 'serviceaccounts'], verbs: ['update'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      { apiGroups: ['*'], resources: ['*'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
    ],
  },
  { metadata: { name: 'system:kube-dns' }, rules: [{ apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['list', 'watch'] }] },
  {
    metadata: { name: 'system:kube-scheduler' },
    rules: [
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resourceNames: ['kube-scheduler'], resources: ['leases'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['endpoints'], verbs: ['create'] },
      { apiGroups: [''], resourceNames: ['kube-scheduler'], resources: ['endpoints'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['delete', 'get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['bindings', 'pods/binding'], verbs: ['create'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
      { apiGroups: [''], resources: ['replicationcontrollers', 'services'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps', 'extensions'], resources: ['replicasets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['persistentvolumeclaims', 'persistentvolumes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      { apiGroups: ['storage.k8s.io'], resources: ['csinodes'], verbs: ['get', 'list', 'watch'] },
    ],
  },
  {
    metadata: { name: 'system:kubelet-api-admin' },
    rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['proxy'] },
      { apiGroups: [''], resources: ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/spec', 'nodes/stats'], verbs: ['*'] },
    ],
  },
  {
    metadata: { name: 'system:monitoring' },
    rules: [{ nonResourceURLs: ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/readyz', '/readyz/*'], verbs: ['get'] }],
  },
  {
    metadata: { name: 'system:node' },
    rules: [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews', 'subjectaccessreviews'], verbs: ['create'] },
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['create', 'get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch', 'update'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['patch', 'update'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
      { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['persistentvolumeclaims', 'persistentvolumes'], verbs: ['get'] },
      { apiGroups: [''], resources: ['endpoints'], verbs: ['get'] },
      { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      { apiGroups: ['storage.k8s.io'], resources: ['volumeattachments'], verbs: ['get'] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
      { apiGroups: [''], resources: ['persistentvolumeclaims/status'], verbs: ['get', 'patch', 'update'] },
      { apiGroups: ['storage.k8s.io'], resources: ['csidrivers'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['storage.k8s.io'], resources: ['csinodes'], verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      { apiGroups: ['node.k8s.io'], resources: ['runtimeclasses'], verbs: ['get', 'list', 'watch'] },
    ],
  },
  {
    metadata: { name: 'system:node-bootstrapper' },
    rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] }],
  },
  {
    metadata: { name: 'system:node-problem-detector' },
    rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    ],
  },
  {
    metadata: { name: 'system:node-proxier' },
    rules: [
      { apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    ],
  },
  {
    metadata: { name: 'system:persistent-volume-provisioner' },
    rules: [
      { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['create', 'delete', 'get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'update', 'watch'] },
      { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['watch'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    ],
  },
  { metadata: { name: 'system:public-info-viewer' }, rules: [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }] },
  {
    metadata: { name: 'system:service-account-issuer-discovery' },
    rules: [{ nonResourceURLs: ['/.well-known/openid-configuration', '/openid/v1/jwks'], verbs: ['get'] }],
  },
  {
    metadata: { name: 'system:volume-scheduler' },
    rules: [
      { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'list', 'patch', 'update', 'watch'] },
      { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'patch', 'update', 'watch'] },
    ],
  },
  {
    metadata: { name: 'view', labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }] },
  },
];

export const bootstrapClusterRoleBindings: readonly BootstrapClusterRoleBinding[] = [
  {
    metadata: { name: 'cluster-admin' },
    roleRef: 'cluster-admin',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }],
  },
  {
    metadata: { name: 'system:basic-user' },
    roleRef: 'system:basic-user',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
  },
  {
    metadata: { name: 'system:discovery' },
    roleRef: 'system:discovery',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
  },
  {
    metadata: { name: 'system:kube-controller-manager' },
    roleRef: 'system:kube-controller-manager',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' }],
  },
  { metadata: { name: 'system:kube-dns' }, roleRef: 'system:kube-dns', subjects: [{ kind: 'ServiceAccount', name: 'kube-dns', namespace: 'kube-system' }] },
  {
    metadata: { name: 'system:kube-scheduler' },
    roleRef: 'system:kube-scheduler',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-scheduler' }],
  },
  {
    metadata: { name: 'system:monitoring' },
    roleRef: 'system:monitoring',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:monitoring' }],
  },
  { metadata: { name: 'system:node' }, roleRef: 'system:node' },
  {
    metadata: { name: 'system:node-proxier' },
    roleRef: 'system:node-proxier',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-proxy' }],
  },
  {
    metadata: { name: 'system:public-info-viewer' },
    roleRef: 'system:public-info-viewer',
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' },
    ],
  },
  {
    metadata: { name: 'system:service-account-issuer-discovery' },
    roleRef: 'system:service-account-issuer-discovery',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:serviceaccounts' }],
  },
  {
    metadata: { name: 'system:volume-scheduler' },
    roleRef: 'system:volume-scheduler',
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-scheduler' }],
  },
];

export interface BootstrapRole {
  metadata: { namespace: string; name: string };
  rules: PolicyRule[];
}

export interface BootstrapRoleBinding {
  metadata: { namespace: string; name: string };
  /** The Role bound, in the binding's namespace. */
  roleRef: string;
  subjects: Subject[];
}

/** The namespaced roles of the policy (bootstrappolicy NamespaceRoles), without the controllers' own. */
export const bootstrapRoles: readonly BootstrapRole[] = [
  {
    metadata: { namespace: 'kube-system', name: 'extension-apiserver-authentication-reader' },
    rules: [{ apiGroups: [''], resourceNames: ['extension-apiserver-authentication'], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
  },
  {
    metadata: { namespace: 'kube-system', name: 'system::leader-locking-kube-controller-manager' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['watch'] },
      { apiGroups: [''], resourceNames: ['kube-controller-manager'], resources: ['configmaps'], verbs: ['get', 'update'] },
    ],
  },
  {
    metadata: { namespace: 'kube-system', name: 'system::leader-locking-kube-scheduler' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['watch'] },
      { apiGroups: [''], resourceNames: ['kube-scheduler'], resources: ['configmaps'], verbs: ['get', 'update'] },
    ],
  },
];

/** The namespaced role bindings of the policy (bootstrappolicy NamespaceRoleBindings), without the controllers' own. */
export const bootstrapRoleBindings: readonly BootstrapRoleBinding[] = [
  {
    metadata: { namespace: 'kube-system', name: 'system::extension-apiserver-authentication-reader' },
    roleRef: 'extension-apiserver-authentication-reader',
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-scheduler' },
    ],
  },
  {
    metadata: { namespace: 'kube-system', name: 'system::leader-locking-kube-controller-manager' },
    roleRef: 'system::leader-locking-kube-controller-manager',
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' },
      { kind: 'ServiceAccount', name: 'kube-controller-manager', namespace: 'kube-system' },
    ],
  },
  {
    metadata: { namespace: 'kube-system', name: 'system::leader-locking-kube-scheduler' },
    roleRef: 'system::leader-locking-kube-scheduler',
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-scheduler' },
      { kind: 'ServiceAccount', name: 'kube-scheduler', namespace: 'kube-system' },
    ],
  },
];
