import winston from 'winston';
import { configure } from 'safe-stable-stringify';
import { BatchedLines, MESSAGE } from './log-lines';
import { currentContext } from './request-context';

export type Logger = winston.Logger;

// Keys whose values never reach a log line, wherever they appear.
const SECRET_KEYS =
  /^(authorization|password|client_secret|secret|access_token|refresh_token|token|cookie|private_key)$/i;

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_KEYS.test(key) ? '[redacted]' : redact(inner, depth + 1);
  }
  return out;
}

/** The current time as ISO 8601, built once per millisecond (a busy service logs several lines in one). */
let clockMs = 0;
let clockIso = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== clockMs) {
    clockMs = now;
    clockIso = new Date(now).toISOString();
  }
  return clockIso;
}

/** What every line carries: the request id of the request being served, secrets redacted, the time. */
const line = winston.format((info) => {
  const context = currentContext();
  if (context && info.request_id === undefined) info.request_id = context.requestId;
  for (const key of Object.keys(info)) {
    if (SECRET_KEYS.test(key)) info[key] = '[redacted]';
    else info[key] = redact(info[key]);
  }
  if (info.timestamp === undefined) info.timestamp = isoNow();
  return info;
});

// What a line cannot hold as JSON.stringify would write it: a circular reference, a BigInt.
const stringifySafely = configure({});
const bigintAsString = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

/**
 * The line as JSON. logform's json format serialises every line with safe-stable-stringify (keys
 * sorted, a replacer run on every value) and configures a new serialiser for each line; with the
 * timestamp format's own Date, that dominated a request line's cost. The engine's
 * JSON.stringify writes nearly every line; only one it cannot write (circular, BigInt) goes the
 * careful way, as logform's format would have written it.
 */
const json = winston.format((info) => {
  let text: string;
  try {
    text = JSON.stringify(info);
  } catch {
    text = stringifySafely(info, bigintAsString) ?? '{}';
  }
  (info as unknown as Record<symbol, string>)[MESSAGE] = text;
  return info;
});

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Defaults to stdout; tests pass a stream to read what was logged. */
  stream?: NodeJS.WritableStream;
}

/** JSON lines, one per event, each carrying the service and the current request id. */
export function createLogger(options: LoggerOptions): Logger {
  const defaultMeta = { service: options.service };
  const format = winston.format.combine(line(), winston.format.errors({ stack: true }), json());
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta,
    format,
    transports: [new BatchedLines(options.stream ?? process.stdout)],
  });
}
