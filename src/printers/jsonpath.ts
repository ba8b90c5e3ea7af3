// kubectl's JSONPath templates (`-o jsonpath=…`, `wait --for=jsonpath=…`), following client-go's
// util/jsonpath: text with `{…}` expressions, `.field`, `['field']`, `[n]`, `[a:b]`, `[*]`, `..field`,
// `[?(@.path OP value)]` filters, `{range …}…{end}` and quoted literals such as `{"\n"}`. Written here
// because the JSONPath libraries on npm speak RFC 9535's `$`-rooted dialect, not this template one.

/** A template kubectl would refuse: the message is the one kubectl prints after `error parsing jsonpath`. */
export class JsonPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPathError';
  }
}

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'recursive'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start?: number; end?: number }
  | { kind: 'all' }
  | { kind: 'filter'; left: Step[]; op?: string; right?: string | number | boolean };

type Node = { kind: 'text'; text: string } | { kind: 'path'; steps: Step[] } | { kind: 'range'; steps: Step[]; body: Node[] };

/** The `{…}` pieces and text between them; `{end}` closes the nearest `{range}`. */
function parseTemplate(template: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      stack.at(-1)!.push({ kind: 'text', text: template.slice(i) });
      break;
    }
    if (open > i) stack.at(-1)!.push({ kind: 'text', text: template.slice(i, open) });
    const close = closingBrace(template, open);
    const expr = template.slice(open + 1, close).trim();
    i = close + 1;
    if (expr === 'end') {
      if (stack.length === 1) throw new JsonPathError('not in range, nothing to end');
      stack.pop();
      continue;
    }
    if (expr.startsWith('range ')) {
      const node: Node = { kind: 'range', steps: parsePath(expr.slice(6).trim()), body: [] };
      stack.at(-1)!.push(node);
      stack.push(node.body);
      continue;
    }
    const literal = /^"((?:[^"\\]|\\.)*)"$/.exec(expr);
    if (literal) {
      stack.at(-1)!.push({ kind: 'text', text: JSON.parse(`"${literal[1]}"`) as string });
      continue;
    }
    stack.at(-1)!.push({ kind: 'path', steps: parsePath(expr) });
  }
  if (stack.length > 1) throw new JsonPathError('unclosed range');
  return root;
}

function closingBrace(s: string, open: number): number {
  let quote: string | undefined;
  for (let j = open + 1; j < s.length; j++) {
    const c = s[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '}') return j;
  }
  throw new JsonPathError(`unclosed action: ${s.slice(open)}`);
}

function literalValue(raw: string): string | number | boolean {
  const t = raw.trim();
  if (/^(['"]).*\1$/.test(t)) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && !Number.isNaN(Number(t))) return Number(t);
  throw new JsonPathError(`unrecognized filter value ${t}`);
}

/** `.a.b[0]['c'][*]..d[?(@.x=="y")]`, with or without the leading `$` or `.`. */
export function parsePath(expr: string): Step[] {
  const steps: Step[] = [];
  let s = expr.startsWith('$') ? expr.slice(1) : expr;
  if (s !== '' && !s.startsWith('.') && !s.startsWith('[')) s = `.${s}`;
  let i = 0;
  const ident = () => {
    const m = /^[^.[\]\s]*/.exec(s.slice(i))![0];
    i += m.length;
    return m;
  };
  while (i < s.length) {
    if (s.startsWith('..', i)) {
      i += 2;
      steps.push({ kind: 'recursive', name: ident() });
    } else if (s[i] === '.') {
      i++;
      const name = ident();
      if (name === '*') steps.push({ kind: 'all' });
      else if (name !== '') steps.push({ kind: 'field', name });
    } else if (s[i] === '[') {
      const end = bracketEnd(s, i);
      const inner = s.slice(i + 1, end).trim();
      i = end + 1;
      steps.push(bracketStep(inner));
    } else throw new JsonPathError(`unrecognized character in action: ${s.slice(i)}`);
  }
  return steps;
}

function bracketEnd(s: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let j = open; j < s.length; j++) {
    const c = s[j];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0 && c === ']') return j;
    }
  }
  throw new JsonPathError(`unterminated array: ${s.slice(open)}`);
}

function bracketStep(inner: string): Step {
  if (inner === '*') return { kind: 'all' };
  if (/^(['"]).*\1$/.test(inner)) return { kind: 'field', name: inner.slice(1, -1) };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  const slice = /^(-?\d*):(-?\d*)$/.exec(inner);
  if (slice) return { kind: 'slice', ...(slice[1] ? { start: Number(slice[1]) } : {}), ...(slice[2] ? { end: Number(slice[2]) } : {}) };
  const filter = /^\?\((.*)\)$/.exec(inner);
  if (filter) {
    const m = /^@(\S*?)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(filter[1]!.trim());
    if (m) return { kind: 'filter', left: parsePath(m[1]!), op: m[2]!, right: literalValue(m[3]!) };
    const exists = /^@(\S*)$/.exec(filter[1]!.trim());
    if (exists) return { kind: 'filter', left: parsePath(exists[1]!) };
  }
  throw new JsonPathError(`invalid array index ${inner}`);
}

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (v && typeof v === 'object') return Object.values(v);
  return [];
}

function compare(a: unknown, op: string, b: string | number | boolean): boolean {
  const x = typeof b === 'number' && typeof a === 'string' && a !== '' ? Number(a) : a;
  switch (op) {
    case '==':
      return x === b;
    case '!=':
      return x !== b;
    case '<':
      return (x as number) < (b as number);
    case '>':
      return (x as number) > (b as number);
    case '<=':
      return (x as number) <= (b as number);
    default:
      return (x as number) >= (b as number);
  }
}

function applyStep(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    switch (step.kind) {
      case 'field':
        if (v && typeof v === 'object' && !Array.isArray(v) && step.name in v) out.push((v as Record<string, unknown>)[step.name]);
        break;
      case 'all':
        out.push(...children(v));
        break;
      case 'index':
        if (Array.isArray(v)) {
          const at = step.index < 0 ? v.length + step.index : step.index;
          if (at >= 0 && at < v.length) out.push(v[at]);
        }
        break;
      case 'slice':
        if (Array.isArray(v)) out.push(...v.slice(step.start ?? 0, step.end ?? v.length));
        break;
      case 'recursive': {
        const walk = (x: unknown) => {
          if (x && typeof x === 'object') {
            if (!Array.isArray(x) && step.name in x) out.push((x as Record<string, unknown>)[step.name]);
            for (const c of children(x)) walk(c);
          }
        };
        walk(v);
        break;
      }
      case 'filter':
        for (const item of children(v)) {
          const found = evaluate(step.left, item);
          if (step.op === undefined ? found.length > 0 : found.some((f) => compare(f, step.op!, step.right!))) out.push(item);
        }
        break;
    }
  }
  return out;
}

/** The values a path selects in data. */
export function evaluate(steps: readonly Step[], data: unknown): unknown[] {
  return steps.reduce<unknown[]>((values, step) => applyStep(values, step), [data]);
}

function show(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function render(nodes: readonly Node[], data: unknown, out: string[]): void {
  for (const n of nodes) {
    if (n.kind === 'text') out.push(n.text);
    else if (n.kind === 'path') out.push(evaluate(n.steps, data).map(show).join(' '));
    else for (const item of evaluate(n.steps, data)) render(n.body, item, out);
  }
}

/** A parsed template, ready to print objects. */
export interface JsonPathTemplate {
  print(data: unknown): string;
}

/** Parses a kubectl JSONPath template; throws JsonPathError for a malformed one. */
export function jsonPathTemplate(template: string): JsonPathTemplate {
  const nodes = parseTemplate(template);
  return {
    print(data) {
      const out: string[] = [];
      render(nodes, data, out);
      return out.join('');
    },
  };
}

/** The values one `{…}` expression (braces optional) selects, as `wait --for=jsonpath=` compares them. */
export function jsonPathValues(expr: string, data: unknown): unknown[] {
  const inner = expr.trim().replace(/^\{(.*)\}$/s, '$1');
  return evaluate(parsePath(inner), data);
}

/** The text a selected value is compared as (kubectl compares the printed form). */
export const jsonPathText = show;
