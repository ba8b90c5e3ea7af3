// The resource table's row for HorizontalPodAutoscalers: stored as autoscaling/v2 (strategies.ts
// horizontalPodAutoscalerStrategy), served at v2 and, converted (api/autoscaling.ts), at v1; a status
// subresource the HPA controller writes; printed as `kubectl get hpa` prints them
// (printHorizontalPodAutoscaler: NAME, REFERENCE, TARGETS, MINPODS, MAXPODS, REPLICAS, AGE, the
// targets as formatHPAMetrics writes them: `cpu: 42%/50%`, two at most and `+ N more...`).
// Upstream: pkg/registry/autoscaling/horizontalpodautoscaler, pkg/printers/internalversion.

import { hpaFromV1, hpaToV1, type HorizontalPodAutoscaler, type HorizontalPodAutoscalerV1, type MetricSpec, type MetricStatus } from '../../api/autoscaling.js';
import { translateTimestampSince } from '../../printers/ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type TableOptions } from '../../printers/tables.js';
import type { KubeObject } from '../backend.js';
import { mergeSchema } from '../patch.js';
import { resource } from '../resource-def.js';

/** One metric's `current/target`, as formatHPAMetrics prints it. */
function formatMetric(spec: MetricSpec, status: MetricStatus | undefined): string {
  const unknown = '<unknown>';
  const valueOf = (s: { averageValue?: string; value?: string } | undefined, key: 'averageValue' | 'value') => s?.[key] ?? unknown;
  switch (spec.type) {
    case 'External': {
      const t = spec.external?.target;
      if (t?.averageValue !== undefined) return `${valueOf(status?.external?.current, 'averageValue')}/${t.averageValue} (avg)`;
      return `${valueOf(status?.external?.current, 'value')}/${t?.value ?? ''}`;
    }
    case 'Pods':
      return `${valueOf(status?.pods?.current, 'averageValue')}/${spec.pods?.target.averageValue ?? ''}`;
    case 'Object': {
      const t = spec.object?.target;
      if (t?.averageValue !== undefined) return `${valueOf(status?.object?.current, 'averageValue')}/${t.averageValue} (avg)`;
      return `${valueOf(status?.object?.current, 'value')}/${t?.value ?? ''}`;
    }
    case 'Resource':
    case 'ContainerResource': {
      const src = spec.type === 'Resource' ? spec.resource : spec.containerResource;
      const cur = spec.type === 'Resource' ? status?.resource?.current : status?.containerResource?.current;
      const name = src?.name ?? '';
      if (src?.target.averageValue !== undefined) return `${name}: ${cur?.averageValue ?? unknown}/${src.target.averageValue}`;
      const current = cur?.averageUtilization !== undefined ? `${cur.averageUtilization}%` : unknown;
      const target = src?.target.averageUtilization !== undefined ? `${src.target.averageUtilization}%` : '<auto>';
      return `${name}: ${current}/${target}`;
    }
    default:
      return '<unknown type>';
  }
}

/** formatHPAMetrics. */
export function formatHPAMetrics(specs: readonly MetricSpec[], statuses: readonly MetricStatus[]): string {
  if (specs.length === 0) return '<none>';
  const list = specs.map((s, i) => formatMetric(s, statuses[i]));
  const max = 2;
  return list.length > max ? `${list.slice(0, max).join(', ')} + ${list.length - max} more...` : list.join(', ');
}

function hpaTable(items: readonly KubeObject[], opts: TableOptions) {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col(
      'Reference',
      'reference to scaled resource; horizontal pod autoscaler will learn the current resource consumption and will set the desired number of pods by using its Scale subresource.',
    ),
    col(
      'Targets',
      'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).',
    ),
    col('MinPods', 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.'),
    col('MaxPods', 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.'),
    col('Replicas', 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.'),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => {
    const hpa = o as HorizontalPodAutoscaler;
    const ref = hpa.spec?.scaleTargetRef;
    return {
      cells: [
        hpa.metadata?.name ?? '',
        `${ref?.kind ?? ''}/${ref?.name ?? ''}`,
        formatHPAMetrics(hpa.spec?.metrics ?? [], hpa.status?.currentMetrics ?? []),
        hpa.spec?.minReplicas !== undefined ? String(hpa.spec.minReplicas) : '<unset>',
        hpa.spec?.maxReplicas ?? 0,
        hpa.status?.currentReplicas ?? 0,
        translateTimestampSince(hpa.metadata?.creationTimestamp, opts.now),
      ],
      object: rowObject(o, opts.includeObject ?? 'Metadata'),
    };
  });
  return table(columns, rows, opts);
}

export const horizontalPodAutoscalers = resource({
  group: 'autoscaling',
  version: 'v2',
  kind: 'HorizontalPodAutoscaler',
  resource: 'horizontalpodautoscalers',
  singular: 'horizontalpodautoscaler',
  shortNames: ['hpa'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: (b) => b.objects?.storage('HorizontalPodAutoscaler'),
  table: hpaTable,
  mergeSchema: mergeSchema({ 'status.conditions': 'type' }),
  status: ['get', 'patch', 'update'],
  otherVersions: [
    {
      version: 'v1',
      fromStored: (o) => hpaToV1(o as HorizontalPodAutoscaler) as KubeObject,
      toStored: (o) => hpaFromV1(o as HorizontalPodAutoscalerV1) as KubeObject,
    },
  ],
});
