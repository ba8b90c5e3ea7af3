// Command-line plumbing shared by every podvisor command: kubectl-style flag parsing (pflag
// conventions, on node:util's parseArgs), per-command help, and defineCommand, which turns a flag
// table and a handler into a Command for the table in commands.ts.

import { builtin } from '../util/builtins.js';

export type FlagType = 'string' | 'strings' | 'boolean' | 'int';

export interface FlagSpec {
  /** Long name without dashes, e.g. `filename`. */
  name: string;
  /** One-letter shorthand without the dash, e.g. `f`. */
  short?: string;
  type: FlagType;
  usage: string;
  /** Shown in help and returned when the flag is absent. */
  default?: string | boolean | number | string[];
  /** Allowed values of a string flag; anything else is a usage error. */
  values?: string[];
  /** Name of the value in help, e.g. `FILE`. */
  valueName?: string;
}

export type FlagValue = string | boolean | number | string[] | undefined;

export interface ParsedArgs {
  /** Flag values by long name; defaults filled in; absent flags without default are undefined. */
  flags: Record<string, FlagValue>;
  /** Positional arguments in order. */
  args: string[];
  /** Long names of the flags given on the command line (to tell a default from an explicit value). */
  given: Set<string>;
}

/** A malformed command line; commands print it with a `--help` hint and exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** What a command sees of the outside world, so tests can run commands in-process. */
export interface CommandIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted when the process receives SIGINT/SIGTERM; long-running commands stop on it. */
  signal?: AbortSignal;
}

export interface Command {
  name: string;
  /** One line for `podvisor --help`. */
  summary: string;
  /** Runs the command with the arguments after its name; resolves to the exit code. */
  run(argv: string[], io: CommandIO): Promise<number>;
}

const trueWords = new Set(['true', '1', 't', 'T', 'TRUE', 'True']);
const falseWords = new Set(['false', '0', 'f', 'F', 'FALSE', 'False']);

function setFlag(spec: FlagSpec, raw: string | undefined, out: Record<string, FlagValue>): void {
  // pflag names the flag this way in errors whichever spelling was used.
  const shown = spec.short ? `-${spec.short}, --${spec.name}` : `--${spec.name}`;
  switch (spec.type) {
    case 'boolean': {
      if (raw === undefined || trueWords.has(raw)) out[spec.name] = true;
      else if (falseWords.has(raw)) out[spec.name] = false;
      else throw new UsageError(`invalid argument "${raw}" for "${shown}" flag: strconv.ParseBool: parsing "${raw}": invalid syntax`);
      return;
    }
    case 'int': {
      if (raw === undefined || !/^[+-]?[0-9]+$/.test(raw)) {
        throw new UsageError(`invalid argument "${raw ?? ''}" for "${shown}" flag: must be an integer`);
      }
      out[spec.name] = Number.parseInt(raw, 10);
      return;
    }
    case 'strings': {
      const prev = Array.isArray(out[spec.name]) ? (out[spec.name] as string[]) : [];
      // pflag's string slices also accept comma-separated values.
      out[spec.name] = [...prev, ...(raw ?? '').split(',').filter((s) => s !== '')];
      return;
    }
    case 'string': {
      if (spec.values && !spec.values.includes(raw ?? '')) {
        throw new UsageError(`invalid argument "${raw ?? ''}" for "${shown}" flag: must be one of: ${spec.values.join(', ')}`);
      }
      out[spec.name] = raw ?? '';
      return;
    }
  }
}

/** The `--help` flag every command has. */
export const helpFlag: FlagSpec = { name: 'help', short: 'h', type: 'boolean', usage: 'help for this command' };

/**
 * Parses argv by pflag's rules: `--name=value`, `--name value`, `-n value`, `-nvalue`, `-n=value`,
 * bare booleans (`--flag`, `--flag=false`), `--` ends flags; flags and positionals may interleave.
 * node:util's parseArgs does the tokenizing (its non-strict mode keeps every token, so pflag's own
 * error texts and its `-n=value` and `--flag=false` forms can be given here).
 */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const flags: Record<string, FlagValue> = {};
  const given = new Set<string>();
  const args: string[] = [];
  const byName = new Map(specs.map((s) => [s.name, s]));
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const s of specs) {
    options[s.name] = { type: s.type === 'boolean' ? 'boolean' : 'string', ...(s.short ? { short: s.short } : {}) };
  }
  const { tokens } = builtin('node:util').parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  // Within a shorthand group (`-abc`), the position after the current shorthand; `=value` after a
  // boolean ends the group (parseArgs would read `=`, `v`, … as more shorthands).
  let groupIndex = -1;
  let groupPos = 1;
  let skipIndex = -1;
  for (const token of tokens) {
    if (token.index === skipIndex) continue;
    if (token.kind === 'option' && !token.rawName.startsWith('--')) {
      if (token.index !== groupIndex) {
        groupIndex = token.index;
        groupPos = 1;
      }
    }
    if (token.kind === 'positional') {
      args.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const long = token.rawName.startsWith('--');
    const spec = byName.get(token.name);
    if (!spec || (!long && spec.short !== token.name && spec.short !== token.rawName.slice(1))) {
      if (long) throw new UsageError(`unknown flag: ${token.rawName}`);
      throw new UsageError(`unknown shorthand flag: '${token.rawName.slice(1)}' in ${argv[token.index]}`);
    }
    let raw = token.value;
    if (spec.type === 'boolean') {
      // `-b=false`: parseArgs leaves the rest of a shorthand group alone; pflag reads it as the value.
      const arg = argv[token.index]!;
      if (!long) {
        groupPos++;
        if (raw === undefined && arg[groupPos] === '=') {
          raw = arg.slice(groupPos + 1);
          skipIndex = token.index;
        }
      }
    } else if (raw === undefined) {
      throw new UsageError(long ? `flag needs an argument: ${token.rawName}` : `flag needs an argument: '${spec.short}' in ${argv[token.index]}`);
    } else if (!long && token.inlineValue && raw.startsWith('=')) {
      raw = raw.slice(1);
    }
    setFlag(spec, raw, flags);
    given.add(spec.name);
  }

  for (const s of specs) {
    if (!(s.name in flags) && s.default !== undefined) flags[s.name] = s.default;
  }
  return { flags, args, given };
}

export interface CommandDefinition {
  name: string;
  summary: string;
  /** Usage line(s) after `Usage:`, e.g. `podvisor validate -f FILENAME... [flags]`. */
  usage: string;
  /** Longer description for `--help`; optional. */
  description?: string;
  /** Example invocations for `--help`; optional. */
  examples?: string[];
  flags: FlagSpec[];
  /** Checks positional arguments; return an error text to reject them (default: none allowed). */
  checkArgs?: (args: string[]) => string | undefined;
  run(parsed: ParsedArgs, io: CommandIO): Promise<number>;
}

function flagLine(s: FlagSpec): [string, string] {
  const value = s.type === 'boolean' ? '' : s.type === 'int' ? 'int' : (s.valueName ?? (s.type === 'strings' ? 'strings' : 'string'));
  const left = `${s.short ? `-${s.short}, ` : '    '}--${s.name}${value ? ` ${value}` : ''}`;
  let usage = s.usage;
  if (s.values) usage += ` One of: ${s.values.join('|')}.`;
  if (s.default !== undefined && s.default !== false && !(Array.isArray(s.default) && s.default.length === 0)) {
    usage += ` (default ${Array.isArray(s.default) ? `[${s.default.join(',')}]` : String(s.default)})`;
  }
  return [left, usage];
}

/** Help text of a command, kubectl-style: description, examples, options, usage. */
export function formatHelp(def: CommandDefinition): string {
  const out: string[] = [];
  out.push(def.description ?? def.summary, '');
  if (def.examples?.length) {
    out.push('Examples:');
    for (const e of def.examples) out.push(`  ${e}`);
    out.push('');
  }
  const lines = [...def.flags, helpFlag].map(flagLine);
  const width = Math.max(...lines.map(([l]) => l.length));
  out.push('Options:');
  for (const [l, u] of lines) out.push(`  ${l.padEnd(width)}  ${u}`);
  out.push('', 'Usage:', `  ${def.usage}`, '');
  return out.join('\n');
}

/**
 * Builds a Command from a flag table and a handler: parses flags, answers `--help`, and turns
 * usage errors into `error: …` plus a `--help` hint and exit code 2, so handlers see only valid input.
 */
export function defineCommand(def: CommandDefinition): Command & { definition: CommandDefinition } {
  return {
    name: def.name,
    summary: def.summary,
    definition: def,
    async run(argv, io) {
      let parsed: ParsedArgs;
      try {
        parsed = parseArgs(argv, [...def.flags, helpFlag]);
        if (parsed.flags.help === true) {
          io.stdout.write(formatHelp(def));
          return 0;
        }
        const bad = def.checkArgs ? def.checkArgs(parsed.args) : parsed.args.length ? `unexpected argument "${parsed.args[0]}"` : undefined;
        if (bad) throw new UsageError(bad);
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(io, err.message, def.name);
        throw err;
      }
      return def.run(parsed, io);
    },
  };
}

/** Prints a usage error as kubectl does and returns exit code 2. */
export function usageFailure(io: Pick<CommandIO, 'stderr'>, message: string, command?: string): number {
  io.stderr.write(`error: ${message}\nSee 'podvisor ${command ? `${command} ` : ''}--help' for usage.\n`);
  return 2;
}
