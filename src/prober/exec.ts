// The exec probe (§5.3): the command, with $(VAR) expanded against the container's literal env
// values, run through the runtime's ExecSync; exit code 0 is success, a timeout is a failure.

import type { Container, EnvVar } from '../api/types.js';
import type { RuntimeService } from '../runtime/cri.js';
import { MAX_PROBE_OUTPUT_BYTES, type ActionOutcome } from './probe.js';
import { goQuote } from '../util/go-format.js';

/** The runtime-local ID of a status container ID (`process://abc` → `abc`). */
export function runtimeContainerId(containerId: string): string {
  const i = containerId.indexOf('://');
  return i >= 0 ? containerId.slice(i + 3) : containerId;
}

/**
 * Expands $(VAR) in each element against env entries that carry a literal value; `$$` escapes a `$`;
 * unknown or unterminated references stay as written (Kubernetes' expansion syntax).
 */
export function expandCommandOnlyStatic(command: string[], env: EnvVar[] | undefined): string[] {
  const vars = new Map<string, string>();
  for (const e of env ?? []) if (e.valueFrom === undefined) vars.set(e.name, e.value ?? '');
  return command.map((arg) => expand(arg, vars));
}

function expand(input: string, vars: Map<string, string>): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const rest = input.slice(cursor + 1);
    let advance = 1;
    if (rest[0] === '$') {
      out += '$';
    } else if (rest[0] === '(') {
      const close = rest.indexOf(')', 1);
      if (close >= 0) {
        const name = rest.slice(1, close);
        out += vars.has(name) ? vars.get(name)! : `$(${name})`;
        advance = close + 1;
      } else {
        out += '$(';
      }
    } else {
      out += '$' + rest[0];
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** Runs the exec probe of container; containerId is the status form. */
export async function doExecProbe(
  runtime: RuntimeService,
  containerId: string,
  container: Container,
  command: string[],
  timeoutSeconds: number,
): Promise<ActionOutcome> {
  const cmd = expandCommandOnlyStatic(command, container.env);
  let res;
  try {
    res = await runtime.execSync(runtimeContainerId(containerId), cmd, timeoutSeconds);
  } catch (err) {
    return { result: 'unknown', output: '', error: err instanceof Error ? err : new Error(String(err)) };
  }
  if (res.timedOut) return { result: 'failure', output: `command ${goQuote(cmd.join(' '))} timed out` };
  // stdout then stderr, as the kubelet concatenates them, capped at 10 KiB.
  const combined = Buffer.concat([res.stdout, res.stderr]);
  const output = combined.subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
  return { result: res.exitCode === 0 ? 'success' : 'failure', output };
}
