// Go's text/tabwriter (left-aligned, space padding, no flags), column blocks included: a column is
// aligned over each run of consecutive lines that have a tab-terminated cell in it, as kubectl
// describe's output is, where a line without tabs ends the alignment of the lines above it.

/** Aligns tab-separated text as `tabwriter.NewWriter(out, minwidth, 8, padding, ' ', 0)` would. */
export function goTabwrite(text: string, minwidth: number, padding: number): string {
  const raw = text.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  const lines = raw.map((l) => l.split('\t'));
  const runes = (s: string) => [...s].length;
  const widths: number[] = [];
  let out = '';

  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i]!;
      let line = '';
      cells.forEach((c, j) => {
        line += c;
        if (j < widths.length) line += ' '.repeat(Math.max(0, widths[j]! - runes(c)));
      });
      out += `${line}\n`;
    }
  };

  const format = (line0: number, line1: number) => {
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= lines[t]!.length - 1) continue;
      writeLines(line0, t);
      line0 = t;
      let width = minwidth;
      for (; t < line1; t++) {
        const cells = lines[t]!;
        if (column >= cells.length - 1) break;
        width = Math.max(width, runes(cells[column]!) + padding);
      }
      widths.push(width);
      format(line0, t);
      widths.pop();
      line0 = t;
    }
    writeLines(line0, line1);
  };
  format(0, lines.length);
  return out;
}
