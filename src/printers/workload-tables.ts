// The Tables of the apps/v1 and batch/v1 workloads with kube-apiserver's columns (pkg/printers/
// internalversion/printers.go: printDeployment, printReplicaSet, printStatefulSet, printDaemonSet,
// printJob, printCronJob, printControllerRevision), priority-1 columns for `-o wide`.

import type { ControllerRevision, CronJob, DaemonSet, Deployment, Job, PodTemplateSpec, ReplicaSet, StatefulSet } from '../api/types.js';
import { selectorIsEmpty, selectorString } from '../api/label-selector.js';
import { humanDuration, translateTimestampSince } from './ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type Table, type TableColumnDefinition, type TableOptions } from './tables.js';

type Cell = string | number;

const name = col('Name', nameDescription, 0, 'string', 'name');
const age = col('Age', ageDescription);
const containers = col('Containers', 'Names of each container in the template.', 1);
const images = col('Images', 'Images referenced by each container in the template.', 1);
const selector = col(
  'Selector',
  'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
  1,
);

function templateCells(t: PodTemplateSpec | undefined): [string, string] {
  const cs = t?.spec?.containers ?? [];
  return [cs.map((c) => c.name).join(','), cs.map((c) => c.image ?? '').join(',')];
}

function selectorCell(s: Parameters<typeof selectorString>[0]): string {
  return selectorIsEmpty(s) ? '<none>' : selectorString(s);
}

function build<T extends { metadata?: unknown }>(columns: TableColumnDefinition[], items: readonly T[], cells: (o: T) => Cell[], opts: TableOptions): Table {
  const include = opts.includeObject ?? 'Metadata';
  return table(
    columns,
    items.map((o) => ({ cells: cells(o), object: rowObject(o, include) })),
    opts,
  );
}

const created = (o: { metadata?: { creationTimestamp?: string } }, now: number) => translateTimestampSince(o.metadata?.creationTimestamp, now);

export const deploymentColumns = [
  name,
  col('Ready', 'Number of the pod with ready state'),
  col('Up-to-date', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', 0, 'integer'),
  col('Available', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', 0, 'integer'),
  age,
  containers,
  images,
  selector,
];

export function deploymentTable(items: readonly Deployment[], opts: TableOptions): Table {
  return build(
    deploymentColumns,
    items,
    (d) => [
      d.metadata?.name ?? '',
      `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`,
      d.status?.updatedReplicas ?? 0,
      d.status?.availableReplicas ?? 0,
      created(d, opts.now),
      ...templateCells(d.spec?.template),
      selectorCell(d.spec?.selector),
    ],
    opts,
  );
}

export const replicaSetColumns = [
  name,
  col('Desired', 'Replicas is the number of desired replicas.', 0, 'integer'),
  col('Current', 'Replicas is the most recently observed number of replicas.', 0, 'integer'),
  col('Ready', 'The number of ready replicas for this replica set.', 0, 'integer'),
  age,
  containers,
  images,
  col('Selector', 'Selector is a label query over pods that should match the replica count.', 1),
];

export function replicaSetTable(items: readonly ReplicaSet[], opts: TableOptions): Table {
  return build(
    replicaSetColumns,
    items,
    (rs) => [
      rs.metadata?.name ?? '',
      rs.spec?.replicas ?? 0,
      rs.status?.replicas ?? 0,
      rs.status?.readyReplicas ?? 0,
      created(rs, opts.now),
      ...templateCells(rs.spec?.template),
      selectorCell(rs.spec?.selector),
    ],
    opts,
  );
}

export const statefulSetColumns = [name, col('Ready', 'Number of the pod with ready state'), age, containers, images];

export function statefulSetTable(items: readonly StatefulSet[], opts: TableOptions): Table {
  return build(
    statefulSetColumns,
    items,
    (s) => [s.metadata?.name ?? '', `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 0}`, created(s, opts.now), ...templateCells(s.spec?.template)],
    opts,
  );
}

export const daemonSetColumns = [
  name,
  col('Desired', 'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).', 0, 'integer'),
  col('Current', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', 0, 'integer'),
  col(
    'Ready',
    'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.',
    0,
    'integer',
  ),
  col('Up-to-date', 'The total number of nodes that are running updated daemon pod', 0, 'integer'),
  col(
    'Available',
    'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
    0,
    'integer',
  ),
  col('Node Selector', 'NodeSelector is a selector which must be true for the pod to fit on a node.'),
  age,
  containers,
  images,
  col('Selector', 'A label query over pods that are managed by the daemon set.', 1),
];

export function daemonSetTable(items: readonly DaemonSet[], opts: TableOptions): Table {
  return build(
    daemonSetColumns,
    items,
    (ds) => {
      const s = ds.status;
      const nodeSelector = Object.entries(ds.spec?.template?.spec?.nodeSelector ?? {})
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      return [
        ds.metadata?.name ?? '',
        s?.desiredNumberScheduled ?? 0,
        s?.currentNumberScheduled ?? 0,
        s?.numberReady ?? 0,
        s?.updatedNumberScheduled ?? 0,
        s?.numberAvailable ?? 0,
        nodeSelector || '<none>',
        created(ds, opts.now),
        ...templateCells(ds.spec?.template),
        selectorCell(ds.spec?.selector),
      ];
    },
    opts,
  );
}

export const jobColumns = [
  name,
  col('Status', 'Status of the job.'),
  col('Completions', 'The completed job.'),
  col('Duration', 'Job duration.'),
  age,
  containers,
  images,
  col('Selector', 'A label query over pods that should match the pod count.', 1),
];

const hasCondition = (job: Job, type: string) => (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** The Job's STATUS cell, as printJob decides it. */
export function jobStatusWord(job: Job): string {
  if (hasCondition(job, 'Complete')) return 'Complete';
  if (hasCondition(job, 'Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp) return 'Terminating';
  if (hasCondition(job, 'Suspended')) return 'Suspended';
  if (hasCondition(job, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(job, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

export function jobTable(items: readonly Job[], opts: TableOptions): Table {
  return build(
    jobColumns,
    items,
    (job) => {
      const succeeded = job.status?.succeeded ?? 0;
      let completions: string;
      if (job.spec?.completions !== undefined) completions = `${succeeded}/${job.spec.completions}`;
      else if ((job.spec?.parallelism ?? 0) > 1) completions = `${succeeded}/1 of ${job.spec!.parallelism}`;
      else completions = `${succeeded}/1`;
      const start = job.status?.startTime ? Date.parse(job.status.startTime) : undefined;
      const end = job.status?.completionTime ? Date.parse(job.status.completionTime) : opts.now;
      return [
        job.metadata?.name ?? '',
        jobStatusWord(job),
        completions,
        start === undefined ? '' : humanDuration(end - start),
        created(job, opts.now),
        ...templateCells(job.spec?.template),
        selectorCell(job.spec?.selector),
      ];
    },
    opts,
  );
}

export const cronJobColumns = [
  name,
  col('Schedule', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
  col('Timezone', 'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.'),
  col('Suspend', 'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.', 0, 'boolean'),
  col('Active', 'A list of pointers to currently running jobs.', 0, 'integer'),
  col('Last Schedule', 'Information when was the last time the job was successfully scheduled.'),
  age,
  containers,
  images,
  col('Selector', 'A label query over pods that should match the pod count.', 1),
];

export function cronJobTable(items: readonly CronJob[], opts: TableOptions): Table {
  return build(
    cronJobColumns,
    items,
    (cj) => {
      const last = cj.status?.lastScheduleTime;
      const js = cj.spec?.jobTemplate?.spec;
      return [
        cj.metadata?.name ?? '',
        cj.spec?.schedule ?? '',
        cj.spec?.timeZone ?? '<none>',
        cj.spec?.suspend === true ? 'True' : 'False',
        (cj.status?.active ?? []).length,
        last ? translateTimestampSince(last, opts.now) : '<none>',
        created(cj, opts.now),
        ...templateCells(js?.template),
        selectorCell(js?.selector),
      ];
    },
    opts,
  );
}

export const controllerRevisionColumns = [
  name,
  col('Controller', 'Controller of the object'),
  col('Revision', 'Revision of the ControllerRevision', 0, 'integer'),
  age,
];

export function controllerRevisionTable(items: readonly ControllerRevision[], opts: TableOptions): Table {
  return build(
    controllerRevisionColumns,
    items,
    (cr) => {
      const owner = (cr.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
      const controller = owner ? `${owner.kind.toLowerCase()}.${owner.apiVersion.split('/')[0]}/${owner.name}` : '<none>';
      return [cr.metadata?.name ?? '', controller, cr.revision ?? 0, created(cr, opts.now)];
    },
    opts,
  );
}
