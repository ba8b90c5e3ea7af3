// Go duration flags (`30s`, `1m30s`, `1.5h`; see util/go-duration.ts) with pflag's error wording; kept
// apart from the agent flags so light commands (logs) load nothing else.

import { parseGoDuration } from '../util/go-duration.js';
import { UsageError, type ParsedArgs } from './args.js';

export { parseGoDuration } from '../util/go-duration.js';

/** A DURATION flag in ms, undefined when absent; a usage error (pflag's wording) when malformed or negative. */
export function durationFlag(parsed: ParsedArgs, name: string): number | undefined {
  const raw = parsed.flags[name];
  if (raw === undefined || raw === '') return undefined;
  let ms: number;
  try {
    ms = parseGoDuration(String(raw));
  } catch (err) {
    throw new UsageError(`invalid argument "${String(raw)}" for "--${name}" flag: ${(err as Error).message}`);
  }
  if (ms < 0) throw new UsageError(`invalid argument "${String(raw)}" for "--${name}" flag: must not be negative`);
  return ms;
}
