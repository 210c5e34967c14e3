import winston from 'winston';
import { currentContext } from './request-context';

export type Logger = winston.Logger;

// Keys whose values never reach a log line, wherever they appear.
const SECRET_KEYS = /^(authorization|password|client_secret|secret|access_token|refresh_token|token|cookie|private_key)$/i;

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

const withContext = winston.format((info) => {
  const context = currentContext();
  if (context && info.request_id === undefined) info.request_id = context.requestId;
  for (const key of Object.keys(info)) {
    if (SECRET_KEYS.test(key)) info[key] = '[redacted]';
    else info[key] = redact(info[key]);
  }
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
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: { service: options.service },
    format: winston.format.combine(
      withContext(),
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: [
      options.stream
        ? new winston.transports.Stream({ stream: options.stream })
        : new winston.transports.Console(),
    ],
  });
}
