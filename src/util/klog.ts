// The agent's structured log lines, as the kubelet writes them: klog's text format
// (`I1202 18:32:06.123456   12345 agent] "Starting" key="value"`) or, with --logging-format=json,
// klog's JSON (`{"ts":1733164326.123,"v":0,"msg":"Starting","key":"value"}`; errors add `"err"`).

import type { Logger, LogLevel } from './logger.js';

const letter: Record<LogLevel, string> = { debug: 'I', info: 'I', warn: 'W', error: 'E' };
const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function value(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'string') return JSON.stringify(v);
  return JSON.stringify(v) ?? 'null';
}

export function klogLine(level: LogLevel, msg: string, fields: Record<string, unknown> | undefined, now: Date, pid: number, component: string): string {
  const head =
    `${letter[level]}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())} ` +
    `${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}.${pad(now.getUTCMilliseconds(), 3)}000 ` +
    `${String(pid).padStart(7)} ${component}] `;
  const kv = Object.entries(fields ?? {})
    .map(([k, v]) => ` ${k}=${value(v)}`)
    .join('');
  return `${head}${JSON.stringify(msg)}${kv}\n`;
}

export function jsonLogLine(level: LogLevel, msg: string, fields: Record<string, unknown> | undefined, now: Date): string {
  const rec: Record<string, unknown> = { ts: now.getTime() / 1000, ...(level === 'error' ? {} : { v: level === 'debug' ? 4 : 0 }), msg };
  for (const [k, v] of Object.entries(fields ?? {})) rec[k] = v instanceof Error ? v.message : v;
  return `${JSON.stringify(rec)}\n`;
}

/** A Logger writing klog text or JSON lines at or above min. */
export function klogLogger(stream: NodeJS.WritableStream, opts: { format?: 'text' | 'json'; min?: LogLevel; component?: string } = {}): Logger {
  const min = opts.min ?? 'info';
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (order[level] < order[min]) return;
    const now = new Date();
    stream.write(opts.format === 'json' ? jsonLogLine(level, msg, fields, now) : klogLine(level, msg, fields, now, process.pid, opts.component ?? 'agent'));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}
