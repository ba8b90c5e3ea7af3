// The map of podvisor's layers, enforced: `npm run lint:imports` (dependency-cruiser over src/ and bench/).
// Each floor may import the floors below it and its own folder, never a floor above and never a sibling
// folder on its own floor, except where `siblingImports` says so and why. Type-only imports count too.
// The rules below are made from these two tables: one per floor (nothing upward), one per folder that has
// siblings, plus no cycles, the process runtime behind its one face, and no tests in shipped code.

/** Bottom to top. A folder is a top-level folder of src/ (bench/ is the roof: it may import anything). */
const floors = [
  {
    name: 'ground',
    folders: ['util', 'spdy'],
    role: 'helpers that know nothing of Kubernetes (clock, logger, timers, atomic writes) and the SPDY/3.1 framer',
  },
  { name: 'api', folders: ['api'], role: 'the Kubernetes v1 types, their schema, decoding, defaults and validation' },
  { name: 'config', folders: ['config'], role: 'manifests read from files, directories and pipes into defaulted, validated objects' },
  {
    name: 'runtime',
    folders: ['runtime'],
    role: 'the container runtime behind the CRI: the CRI client and server, container logs, and the process runtime',
  },
  {
    name: 'kubelet parts',
    folders: ['prober', 'status', 'events', 'printers'],
    role: "the kubelet's probes, pod status, event recording, and the kubectl-style printers",
  },
  {
    name: 'kuberuntime',
    folders: ['kuberuntime'],
    role: 'what turns a container spec into CRI calls: start, kill, hooks, configs, env vars, volumes, images, sandboxes',
  },
  { name: 'kubelet', folders: ['kubelet'], role: 'the kubelet core: facade, pod workers, admission, back-off, run-once, the PLEG' },
  {
    name: 'scheduler',
    folders: ['scheduler'],
    role: "the one-node scheduler: kube-scheduler's filter plugins, scheduling queue with back-off, preemption, and the taint manager's NoExecute eviction",
  },
  {
    name: 'http',
    folders: ['http'],
    role: 'the HTTP plumbing the servers share: the route table, the one v1 Status module and error type, request bodies, streamed logs',
  },
  {
    name: 'serving',
    folders: ['kubeapi', 'server', 'streaming'],
    role: "the Kubernetes API (a table of resources behind one REST handler), the kubelet's port and its auth, exec/attach/port-forward streams",
  },
  {
    name: 'controllers',
    folders: ['controllers'],
    role: "the standalone agent's workload controllers (ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob, Namespace, garbage collector) over shared informers of the API's storages",
  },
  {
    name: 'service network',
    folders: ['proxy', 'dns'],
    role: "Services on the host: the userspace service proxy (kube-proxy's role) and the cluster DNS server, both fed by the API's stored Services and Endpoints",
  },
  { name: 'cluster', folders: ['cluster'], role: 'the cluster node: joins a real kube-apiserver, mirrors pods, node status and leases' },
  { name: 'agent', folders: ['agent'], role: 'where the kubelet, its runtime and its servers are put together' },
  { name: 'cli', folders: ['cli'], role: 'the podvisor commands: flags, signals, output' },
];

/**
 * Imports between sibling folders of one floor that are allowed, each with the reason it is sound.
 * Within a floor these make a strict order (no two siblings import each other).
 */
const siblingImports = [
  {
    from: 'prober',
    to: 'events',
    why: "the prober records Unhealthy/ProbeWarning events through the event recorder, as the kubelet's prober uses client-go's record.EventRecorder; events imports nothing of the prober",
  },
  {
    from: 'status',
    to: 'prober',
    why: "pod status generation asks the probe manager for readiness and startup results (the kubelet's generateAPIPodStatus calls probeManager.UpdatePodStatus); the prober imports nothing of status",
  },
  {
    from: 'streaming',
    to: 'kubeapi',
    why: "exec/attach/port-forward are subresources of the API's pods: the stream handlers take the API's backend interface and answer with its v1 Status errors; kubeapi imports nothing of streaming",
  },
];

const folderPattern = (folders) => `^src/(${folders.join('|')})/`;
const ruleName = (name) => name.replace(/ /g, '-');

// One rule per floor: nothing imports upward (nor the bench, which stands above everything).
const floorRules = floors.map((floor, i) => {
  const above = floors.slice(i + 1).flatMap((f) => f.folders);
  return {
    name: `floor-${ruleName(floor.name)}`,
    comment: `${floor.name} (${floor.folders.join(', ')}): ${floor.role}. It imports only the floors below it, never ${[...above, 'bench'].join(', ')}.`,
    severity: 'error',
    from: { path: folderPattern(floor.folders) },
    to: { path: above.length ? `${folderPattern(above)}|^bench/` : '^bench/' },
  };
});

// On a floor of several folders, a folder imports no sibling but those siblingImports allows it.
const siblingRules = floors
  .filter((floor) => floor.folders.length > 1)
  .flatMap((floor) =>
    floor.folders.map((folder) => {
      const allowed = siblingImports.filter((s) => s.from === folder).map((s) => s.to);
      const forbidden = floor.folders.filter((f) => f !== folder && !allowed.includes(f));
      return {
        name: `siblings-${folder}`,
        comment: `${folder} shares the ${floor.name} floor with ${floor.folders.filter((f) => f !== folder).join(', ')}: it imports ${
          allowed.length ? `only ${allowed.join(', ')} of them (see siblingImports for why)` : 'none of them'
        }.`,
        severity: 'error',
        from: { path: `^src/${folder}/` },
        to: { path: folderPattern(forbidden) },
      };
    }),
  );

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, not even between two files of one folder: a cycle is two modules that are really one.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'process-runtime-one-face',
      comment: 'Outside src/runtime/, the process runtime is reached only through src/runtime/process-runtime.ts, which names what a client may know of it.',
      severity: 'error',
      from: { path: '^(src|bench)/', pathNot: '^src/runtime/' },
      to: { path: '^src/runtime/process/' },
    },
    {
      name: 'not-to-test',
      comment: 'Shipped code never imports the tests (the bench may: it reuses their harnesses, such as the control plane and containerd).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
    ...floorRules,
    ...siblingRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|bench|test)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.cts', '.js', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
