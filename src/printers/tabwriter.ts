// The one tabwriter of every printer: Go's text/tabwriter (left-aligned, space padding) with the
// RememberWidths flag of kubectl's fork (github.com/liggitt/tabwriter, used by printers.GetNewTabWriter).

/** The NewWriter parameters that shape the output (padchar is ' ', tabwidth is then unused). */
export interface TabwriterSettings {
  /** Minimal cell width, padding included. */
  readonly minwidth: number;
  /** Added to a cell's width before a column's width is taken. */
  readonly padding: number;
}

/** printers.GetNewTabWriter, the writer of `kubectl get` and `kubectl top` tables. */
export const getTableSettings: TabwriterSettings = { minwidth: 6, padding: 3 };

/** describe's tabbedString, `tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)`. */
export const describeSettings: TabwriterSettings = { minwidth: 0, padding: 2 };

/**
 * Lines of cells as one Flush of Writer.format lays them out: a column is aligned over each run of
 * consecutive lines that have a tab-terminated cell in it (every cell of a line but its last), so a
 * line with fewer cells ends the alignment of the lines above it. Widths count code points, as
 * tabwriter counts runes. `remembered`, when given, is RememberWidths' per-column maxima: read and
 * raised. The last line is written without a newline, as Flush writes the text after the last '\n'.
 */
function format(lines: readonly (readonly string[])[], settings: TabwriterSettings, remembered: number[] | undefined): string {
  const runes = (s: string) => [...s].length;
  const widths: number[] = [];
  let out = '';

  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i]!;
      cells.forEach((cell, j) => {
        out += cell;
        if (j < widths.length) out += ' '.repeat(widths[j]! - runes(cell));
      });
      if (i + 1 < lines.length) out += '\n';
    }
  };

  const columnWidth = (from: number, to: number): number => {
    let width = settings.minwidth;
    for (let t = from; t < to; t++) width = Math.max(width, runes(lines[t]![widths.length]!) + settings.padding);
    if (!remembered) return width;
    if (remembered.length < widths.length) remembered.push(...widths.slice(remembered.length));
    const max = remembered[widths.length];
    if (max === undefined || max < width) remembered[widths.length] = width;
    return Math.max(width, max ?? 0);
  };

  const formatBlock = (line0: number, line1: number) => {
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= lines[t]!.length - 1) continue;
      writeLines(line0, t);
      line0 = t;
      while (t < line1 && column < lines[t]!.length - 1) t++;
      widths.push(columnWidth(line0, t));
      formatBlock(line0, t);
      widths.pop();
      line0 = t;
    }
    writeLines(line0, line1);
  };
  formatBlock(0, lines.length);
  return out;
}

/** Rows of cells, each a line ending in '\n', as one Flush of a new writer. Cells are taken as given. */
export function tabwriteRows(rows: readonly (readonly string[])[], settings: TabwriterSettings): string {
  return format([...rows, []], settings, undefined);
}

/** Text with '\t'-terminated cells and '\n'-terminated lines, written and flushed on a new writer. */
export function tabwriteText(text: string, settings: TabwriterSettings): string {
  return format(
    text.split('\n').map((line) => line.split('\t')),
    settings,
    undefined,
  );
}

/**
 * A writer with RememberWidths, as kubectl's get printer keeps one across a watch: each flush is laid
 * out on its own, but no column is narrower than it was in an earlier flush.
 */
export class RememberingTabwriter {
  private readonly remembered: number[];

  /** `widths`: SetRememberedWidths, columns to start at least this wide (padding included). */
  constructor(
    private readonly settings: TabwriterSettings,
    widths: readonly number[] = [],
  ) {
    this.remembered = [...widths];
  }

  /** Rows of cells, each a line ending in '\n', as one Flush. */
  flushRows(rows: readonly (readonly string[])[]): string {
    return format([...rows, []], this.settings, this.remembered);
  }
}
