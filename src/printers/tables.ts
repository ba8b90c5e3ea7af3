// Server-side printing: the pod and event columns of `kubectl get` (READY, STATUS and RESTARTS computed
// exactly as kubectl's printPod computes them), served as meta.k8s.io Tables and printed by podvisor's
// own commands, so a pod reads the same everywhere.

import type { Container, ContainerStatus, Pod, PodCondition, PodStatus } from '../api/types.js';
import type { Event } from '../api/types.js';
import { translateTimestampSince } from './ages.js';
import { eventTableRow } from './events.js';
import { getTableSettings, tabwriteRows } from './tabwriter.js';

/** The node-lifecycle reason kubectl shows as `Unknown` for a terminating pod. */
const NodeUnreachablePodReason = 'NodeLost';

export const podColumns = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'] as const;
export const podWideColumns = [...podColumns, 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'] as const;

export interface PodPrintOptions {
  wide?: boolean;
  /** ms since epoch the ages are measured against. */
  now: number;
}

function isRestartable(c: Container | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

function isTerminalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

function conditionTrue(conditions: PodCondition[] | undefined, type: string): boolean {
  return (conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** Later of two RFC 3339 times (either may be unset). */
function later(a: string | undefined, b: string | undefined): string | undefined {
  if (!b) return a;
  if (!a) return b;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** The cells of one pod row, as printPod builds them. */
export function podRow(pod: Pod, opts: PodPrintOptions): string[] {
  const cells = podCells(pod, opts.now).map(String);
  return opts.wide ? cells : cells.slice(0, 5);
}

/**
 * All nine cells of a pod's Table row (priority-1 columns included); Restarts is a number, or the
 * string kubectl shows (`5 (3m ago)`) when the last restart time is known.
 */
export function podCells(pod: Pod, now: number): Array<string | number> {
  const spec = pod.spec;
  const status: PodStatus = pod.status ?? {};
  let restarts = 0;
  let restartableInitContainerRestarts = 0;
  let totalContainers = spec?.containers.length ?? 0;
  let readyContainers = 0;
  let lastRestartDate: string | undefined;
  let lastRestartableInitContainerRestartDate: string | undefined;

  const podPhase = status.phase;
  let reason: string = podPhase ?? '';
  if (status.reason) reason = status.reason;

  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initContainers = spec?.initContainers;
  if (initContainers) for (const c of initContainers) if (isRestartable(c)) totalContainers++;

  let initializing = false;
  const initStatuses: ContainerStatus[] = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const container = initStatuses[i]!;
    restarts += container.restartCount ?? 0;
    const lastTerminated = container.lastState?.terminated;
    if (lastTerminated) lastRestartDate = later(lastRestartDate, lastTerminated.finishedAt);
    const restartable = isRestartable(initContainers?.find((c) => c.name === container.name));
    if (restartable) {
      restartableInitContainerRestarts += container.restartCount ?? 0;
      if (lastTerminated) lastRestartableInitContainerRestartDate = later(lastRestartableInitContainerRestartDate, lastTerminated.finishedAt);
    }
    const terminated = container.state?.terminated;
    const waiting = container.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (restartable && container.started === true) {
      if (container.ready) readyContainers++;
      continue;
    }
    if (terminated) {
      // initialization failed
      if (!terminated.reason) {
        reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode}`;
      } else {
        reason = `Init:${terminated.reason}`;
      }
    } else if (waiting && waiting.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${spec?.initContainers?.length ?? 0}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(status.conditions, 'Initialized')) {
    restarts = restartableInitContainerRestarts;
    lastRestartDate = lastRestartableInitContainerRestartDate;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i]!;
      restarts += container.restartCount ?? 0;
      const lastTerminated = container.lastState?.terminated;
      if (lastTerminated) lastRestartDate = later(lastRestartDate, lastTerminated.finishedAt);
      const waiting = container.state?.waiting;
      const terminated = container.state?.terminated;
      if (waiting && waiting.reason) {
        reason = waiting.reason;
      } else if (terminated && terminated.reason) {
        reason = terminated.reason;
      } else if (terminated) {
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      } else if (container.ready && container.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // A pod with a container still running is not "Completed" yet.
    if (reason === 'Completed' && hasRunning) {
      reason = conditionTrue(status.conditions, 'Ready') ? 'Running' : 'NotReady';
    }
  }

  const deleting = !!pod.metadata?.deletionTimestamp;
  if (deleting && status.reason === NodeUnreachablePodReason) reason = 'Unknown';
  else if (deleting && !isTerminalPhase(podPhase)) reason = 'Terminating';

  let restartsCell: string | number = restarts;
  if (restarts !== 0 && lastRestartDate) {
    restartsCell = `${restarts} (${translateTimestampSince(lastRestartDate, now)} ago)`;
  }

  const cells: Array<string | number> = [
    pod.metadata?.name ?? '',
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsCell,
    translateTimestampSince(pod.metadata?.creationTimestamp, now),
  ];
  {
    const podIP = status.podIPs?.[0]?.ip || '<none>';
    const nodeName = spec?.nodeName || '<none>';
    const nominatedNodeName = status.nominatedNodeName || '<none>';
    let readinessGates = '<none>';
    const gates = spec?.readinessGates ?? [];
    if (gates.length > 0) {
      let trueConditions = 0;
      for (const gate of gates) {
        const cond = (status.conditions ?? []).find((c) => c.type === gate.conditionType);
        if (cond?.status === 'True') trueConditions++;
      }
      readinessGates = `${trueConditions}/${gates.length}`;
    }
    cells.push(podIP, nodeName, nominatedNodeName, readinessGates);
  }
  return cells;
}

/** The STATUS column alone. */
export function podStatusReason(pod: Pod, now = Date.now()): string {
  return podRow(pod, { now })[2]!;
}

/** A `kubectl get pods` table (with `-o wide` columns when asked). */
export function formatPodTable(pods: readonly Pod[], opts: PodPrintOptions): string {
  return tabwriteRows([opts.wide ? podWideColumns : podColumns, ...pods.map((p) => podRow(p, opts))], getTableSettings);
}

// ---- meta.k8s.io/v1 Tables ----

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string; continue?: string };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/** `includeObject` of a Table request: None, Metadata (the default) or Object. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export const nameDescription =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
export const ageDescription =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export function col(name: string, description: string, priority = 0, type = 'string', format = ''): TableColumnDefinition {
  return { name, type, format, description, priority };
}

/** The pod columns of kube-apiserver's printers (Restarts an integer; priority 1 for `-o wide`). */
export const podColumnDefinitions: TableColumnDefinition[] = [
  col('Name', nameDescription, 0, 'string', 'name'),
  col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
  col('Status', 'The aggregate status of the containers in this pod.'),
  col('Restarts', 'The number of times the containers in this pod have been restarted.', 0, 'integer'),
  col('Age', ageDescription),
  col('IP', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', 1),
  col('Node', 'NodeName is a request to schedule this pod onto a specific node.', 1),
  col('Nominated Node', 'nominatedNodeName is set when this pod preempts other pods on the node.', 1),
  col('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.', 1),
];

/** The event columns of kube-apiserver's printers. */
export const eventColumnDefinitions: TableColumnDefinition[] = [
  col('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
  col('Type', 'Type of this event (Normal, Warning), new types could be added in the future.'),
  col('Reason', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
  col('Object', 'The object that this event is about.'),
  col('Subobject', 'The subobject (field path) of the object this event is about.', 1),
  col('Source', 'The component reporting this event.', 1),
  col('Message', 'A human-readable description of the status of this operation.'),
  col('First Seen', 'The time at which the event was first recorded.', 1),
  col('Count', 'The number of times this event has occurred.', 1),
  col('Name', nameDescription, 1, 'string', 'name'),
];

export function rowObject(obj: { metadata?: unknown }, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata ?? {} };
}

export interface TableOptions {
  now: number;
  includeObject?: IncludeObject;
  resourceVersion?: string;
  /** Leave columnDefinitions out (watch events after the first, as the API server does). */
  noColumns?: boolean;
}

export function table(columns: TableColumnDefinition[], rows: TableRow[], opts: TableOptions): Table {
  const metadata: Table['metadata'] = {};
  if (opts.resourceVersion !== undefined) metadata.resourceVersion = opts.resourceVersion;
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata, columnDefinitions: opts.noColumns ? [] : columns, rows };
}

/** Pods as the Table `kubectl get pods` asks for. */
export function podTable(pods: readonly Pod[], opts: TableOptions): Table {
  const include = opts.includeObject ?? 'Metadata';
  return table(
    podColumnDefinitions,
    pods.map((p) => ({ cells: podCells(p, opts.now), object: rowObject(p, include) })),
    opts,
  );
}

/** Events as the Table `kubectl get events` asks for. */
export function eventTable(events: readonly Event[], opts: TableOptions): Table {
  const include = opts.includeObject ?? 'Metadata';
  return table(
    eventColumnDefinitions,
    events.map((e) => ({ cells: eventTableRow(e, opts.now, true), object: rowObject(e as { metadata?: unknown }, include) })),
    opts,
  );
}

export interface RenderOptions {
  wide?: boolean;
  noHeaders?: boolean;
  /** Prefix a NAMESPACE column from each row's object metadata (`-A`). */
  withNamespace?: boolean;
  /** Append a LABELS column (`--show-labels`). */
  showLabels?: boolean;
  /** Column definitions of an earlier Table of the same stream (watch events carry none). */
  columns?: TableColumnDefinition[];
}

function rowMeta(row: TableRow): { namespace?: string; labels?: Record<string, string> } {
  const o = row.object as { metadata?: { namespace?: string; labels?: Record<string, string> } } | undefined;
  return o?.metadata ?? {};
}

/** A Table printed as kubectl prints it: upper-case headers, priority-1 columns only when wide. */
export function renderTable(t: Table, opts: RenderOptions = {}): string {
  const rows = tableRows(t, opts);
  if (rows.length === 0) return '';
  return tabwriteRows(rows, getTableSettings);
}

/** The cells renderTable prints (the header row first unless noHeaders), before alignment. */
export function tableRows(t: Table, opts: RenderOptions = {}): string[][] {
  const columns = t.columnDefinitions.length ? t.columnDefinitions : (opts.columns ?? []);
  const shown = columns.map((c, i) => ({ c, i })).filter(({ c }) => opts.wide || c.priority === 0);
  const rows: string[][] = [];
  if (!opts.noHeaders) {
    const h = shown.map(({ c }) => c.name.toUpperCase());
    if (opts.withNamespace) h.unshift('NAMESPACE');
    if (opts.showLabels) h.push('LABELS');
    rows.push(h);
  }
  for (const r of t.rows) {
    const cells = shown.map(({ i }) => String(r.cells[i] ?? ''));
    const meta = rowMeta(r);
    if (opts.withNamespace) cells.unshift(meta.namespace ?? '');
    if (opts.showLabels) {
      const labels = Object.entries(meta.labels ?? {})
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => `${k}=${v}`);
      cells.push(labels.length ? labels.join(',') : '<none>');
    }
    rows.push(cells);
  }
  return rows;
}
