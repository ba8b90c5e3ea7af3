// A minimal leveled logger passed into every component (no global logger), so tests can silence or
// capture it and the CLI can route it to stderr.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Writes `level msg key=value…` lines to a stream at or above a minimum level. */
export function streamLogger(stream: NodeJS.WritableStream, min: LogLevel = 'info'): Logger {
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (order[level] < order[min]) return;
    const extra = fields
      ? Object.entries(fields)
          .map(([k, v]) => ` ${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v instanceof Error ? v.message : JSON.stringify(v))}`)
          .join('')
      : '';
    stream.write(`${new Date().toISOString()} ${level} ${msg}${extra}\n`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

/** Discards everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
