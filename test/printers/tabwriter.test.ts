// The one tabwriter: Go's text/tabwriter column blocks (a line with fewer cells ends the alignment
// above it), kubectl's get and describe settings, and the RememberWidths of kubectl's watch.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeSettings, getTableSettings, RememberingTabwriter, tabwriteRows, tabwriteText } from '../../src/printers/tabwriter.js';

test('tabwriteText aligns each run of lines sharing a column, as text/tabwriter', () => {
  const text = 'Name:\tweb\nNamespace:\tdefault\nContainers:\n  main:\n    Image:\tbusybox\n    Restart Count:\t0\nQoS Class:\tBestEffort\n';
  assert.equal(
    tabwriteText(text, describeSettings),
    // QoS Class follows the container lines without a line between: it shares their block.
    'Name:       web\nNamespace:  default\nContainers:\n  main:\n    Image:          busybox\n    Restart Count:  0\nQoS Class:          BestEffort\n',
  );
  // Nested columns: the second column aligns only over the lines that have a third cell.
  assert.equal(tabwriteText('a\tb\tc\naaa\tbb\tc\nx\ty\n', { minwidth: 0, padding: 1 }), 'a   b  c\naaa bb c\nx   y\n');
  // Text after the last newline is flushed as it is, with no newline added.
  assert.equal(tabwriteText('a\tb\nccc\td', { minwidth: 0, padding: 1 }), 'a   b\nccc d');
});

test("tabwriteRows: every cell but a row's last is padded, widths count code points, minwidth holds", () => {
  assert.equal(
    tabwriteRows(
      [
        ['NAME', 'AGE'],
        ['é', '5s'],
      ],
      getTableSettings,
    ),
    'NAME   AGE\né      5s\n',
  );
  // A row with one cell ends the column block, as a line without tabs does.
  assert.equal(tabwriteRows([['a', 'b', 'c'], ['x'], ['aaaa', 'b', 'c']], { minwidth: 0, padding: 1 }), 'a b c\nx\naaaa b c\n');
  // A trailing empty cell (kubectl top ends every cell with a tab) pads the one before it.
  assert.equal(
    tabwriteRows(
      [
        ['CPU', ''],
        ['1m', ''],
      ],
      getTableSettings,
    ),
    'CPU   \n1m    \n',
  );
  assert.equal(tabwriteRows([], getTableSettings), '');
});

test('RememberingTabwriter: a column never narrows across flushes, and widens when it must', () => {
  const w = new RememberingTabwriter(getTableSettings);
  assert.equal(
    w.flushRows([
      ['NAME', 'STATUS'],
      ['a', 'Running'],
    ]),
    'NAME   STATUS\na      Running\n',
  );
  assert.equal(w.flushRows([['a-long-name', 'Pending']]), 'a-long-name   Pending\n');
  assert.equal(w.flushRows([['b', 'Running']]), 'b             Running\n');
  // Started at given widths (SetRememberedWidths).
  const seeded = new RememberingTabwriter(getTableSettings, [10]);
  assert.equal(seeded.flushRows([['a', 'b']]), 'a         b\n');
});
