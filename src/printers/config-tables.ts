// The Table columns of ConfigMaps and Secrets as kube-apiserver's printers build them
// (pkg/printers/internalversion printConfigMap, printSecret: `kubectl get cm` NAME DATA AGE,
// `kubectl get secret` NAME TYPE DATA AGE), and of PodMetrics as metrics-server's storage builds them
// (pkg/api table.go: NAME, one column per resource with the containers' usage summed, WINDOW).

import { translateTimestampSince } from './ages.js';
import { ageDescription, col, nameDescription, rowObject, table, type Table, type TableOptions } from './tables.js';

interface ObjectLike {
  metadata?: { name?: string; creationTimestamp?: string };
}

export interface ConfigMapLike extends ObjectLike {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export interface SecretLike extends ObjectLike {
  type?: string;
  data?: Record<string, string>;
}

export interface PodMetricsLike extends ObjectLike {
  window?: string;
  containers?: Array<{ usage?: Record<string, string> }>;
}

const count = (m: Record<string, string> | undefined): number => Object.keys(m ?? {}).length;

export function configMapTable(items: readonly ConfigMapLike[], opts: TableOptions): Table {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col(
      'Data',
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', count(o.data) + count(o.binaryData), translateTimestampSince(o.metadata?.creationTimestamp, opts.now)],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

export function secretTable(items: readonly SecretLike[], opts: TableOptions): Table {
  const columns = [
    col('Name', nameDescription, 0, 'string', 'name'),
    col('Type', 'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types'),
    col(
      'Data',
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    col('Age', ageDescription),
  ];
  const rows = items.map((o) => ({
    cells: [o.metadata?.name ?? '', o.type ?? '', count(o.data), translateTimestampSince(o.metadata?.creationTimestamp, opts.now)],
    object: rowObject(o, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}

/** A sum of quantities of one suffix (metrics-server's `n` and `Ki`), as Quantity.String() prints it. */
function sumQuantities(values: readonly string[]): string {
  let nanos = 0n;
  let kibis = 0n;
  for (const v of values) {
    if (v.endsWith('n')) nanos += BigInt(v.slice(0, -1));
    else if (v.endsWith('Ki')) kibis += BigInt(v.slice(0, -2));
    else if (/^\d+$/.test(v)) nanos += BigInt(v) * 1_000_000_000n;
  }
  if (kibis > 0n) {
    const units = ['Ki', 'Mi', 'Gi', 'Ti'];
    let i = 0;
    while (i < units.length - 1 && kibis % 1024n === 0n) {
      kibis /= 1024n;
      i++;
    }
    return `${kibis}${units[i]}`;
  }
  if (nanos === 0n) return '0';
  if (nanos % 1_000_000_000n === 0n) return `${nanos / 1_000_000_000n}`;
  if (nanos % 1_000_000n === 0n) return `${nanos / 1_000_000n}m`;
  if (nanos % 1_000n === 0n) return `${nanos / 1_000n}u`;
  return `${nanos}n`;
}

export function podMetricsTable(items: readonly PodMetricsLike[], opts: TableOptions): Table {
  const resources = [...new Set(items.flatMap((m) => (m.containers ?? []).flatMap((c) => Object.keys(c.usage ?? {}))))].sort();
  const columns = [
    col('Name', 'Name of the resource', 0, 'string', 'name'),
    ...resources.map((r) => col(r, '', 0, 'string', 'quantity')),
    col('Window', '', 0, 'string', 'duration'),
  ];
  const rows = items.map((m) => ({
    cells: [m.metadata?.name ?? '', ...resources.map((r) => sumQuantities((m.containers ?? []).map((c) => c.usage?.[r] ?? '0'))), m.window ?? ''],
    object: rowObject(m, opts.includeObject ?? 'Metadata'),
  }));
  return table(columns, rows, opts);
}
