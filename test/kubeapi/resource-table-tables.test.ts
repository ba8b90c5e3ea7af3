// Every row of the resource table answers server-side Tables (`kubectl get`'s columns, what k9s and
// Headlamp read): a kind added without a `table` fails here. Each table is walked with no objects
// (the column definitions alone) and with one minimal object of its kind (one row, a cell per column,
// its name in the Name column).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configMapTable, podMetricsTable, secretTable } from '../../src/printers/config-tables.js';
import { groupVersionOf } from '../../src/kubeapi/resource-def.js';
import { resourceTable } from '../../src/kubeapi/resource-table.js';

const now = Date.parse('2026-01-02T03:04:05Z');

test('every kind in the resource table has a Table with kubectl columns', () => {
  // Kinds that are only created and answered (the access and token reviews) are never listed, so have no Table.
  for (const def of resourceTable.filter((d) => d.verbs.includes('list') || d.verbs.includes('get'))) {
    const id = `${groupVersionOf(def)} ${def.kind}`;
    assert.ok(def.table, `${id} has no Table (add its columns as upstream's pkg/printers/internalversion/printers.go prints them)`);
    const empty = def.table([], { now });
    assert.equal(empty.kind, 'Table', id);
    assert.ok(empty.columnDefinitions.length >= 2, `${id}: ${JSON.stringify(empty.columnDefinitions)}`);
    const nameColumn = empty.columnDefinitions.findIndex((c) => c.name === 'Name' && c.format === 'name');
    assert.ok(nameColumn >= 0, `${id}: a Name column of format name`);
    const obj = {
      apiVersion: groupVersionOf(def),
      kind: def.kind,
      metadata: { name: 'x', ...(def.namespaced ? { namespace: 'default' } : {}), creationTimestamp: '2026-01-02T03:00:00Z', uid: 'u' },
      spec: def.kind === 'Pod' ? { containers: [{ name: 'c', image: 'i' }] } : {},
      ...(def.kind === 'Event' ? { involvedObject: { kind: 'Pod', name: 'p' } } : {}),
    };
    const one = def.table([obj], { now });
    assert.equal(one.rows.length, 1, id);
    assert.equal(one.rows[0]!.cells.length, one.columnDefinitions.length, `${id}: a cell per column`);
    assert.equal(one.rows[0]!.cells[nameColumn], 'x', id);
  }
});

test('ConfigMap and Secret columns as kubectl prints them: NAME DATA AGE, NAME TYPE DATA AGE', () => {
  const meta = { name: 'app', creationTimestamp: '2026-01-02T03:00:00Z' };
  const cm = configMapTable([{ metadata: meta, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }], { now });
  assert.deepEqual(
    cm.columnDefinitions.map((c) => c.name),
    ['Name', 'Data', 'Age'],
  );
  assert.deepEqual(cm.rows[0]!.cells, ['app', 3, '4m5s']);
  const secret = secretTable([{ metadata: meta, type: 'Opaque', data: { p: 'cA==' } }], { now });
  assert.deepEqual(
    secret.columnDefinitions.map((c) => c.name),
    ['Name', 'Type', 'Data', 'Age'],
  );
  assert.deepEqual(secret.rows[0]!.cells, ['app', 'Opaque', 1, '4m5s']);
});

test("PodMetrics columns as metrics-server's: the containers' usage summed per resource, and the window", () => {
  const t = podMetricsTable(
    [
      {
        metadata: { name: 'web' },
        window: '10s',
        containers: [{ usage: { cpu: '1500000n', memory: '1024Ki' } }, { usage: { cpu: '500000n', memory: '2048Ki' } }],
      },
    ],
    { now },
  );
  assert.deepEqual(
    t.columnDefinitions.map((c) => [c.name, c.format]),
    [
      ['Name', 'name'],
      ['cpu', 'quantity'],
      ['memory', 'quantity'],
      ['Window', 'duration'],
    ],
  );
  assert.deepEqual(t.rows[0]!.cells, ['web', '2m', '3Mi', '10s']);
});
