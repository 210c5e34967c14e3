import type { LogFormat } from './devstack-config';

export interface LineStyle {
  readonly format: LogFormat;
  readonly color: boolean;
  /** Width the source name is padded to, so the columns line up. */
  readonly labelWidth: number;
}

const ANSI = {
  reset: '\u001b[0m',
  dim: '\u001b[2m',
  red: '\u001b[31m',
  green: '\u001b[32m',
  yellow: '\u001b[33m',
  blue: '\u001b[34m',
  magenta: '\u001b[35m',
  cyan: '\u001b[36m',
  gray: '\u001b[90m',
} as const;

type Color = keyof typeof ANSI;

const SOURCE_COLORS: Record<string, Color> = {
  desk: 'cyan',
  link: 'magenta',
  hr: 'yellow',
  postgres: 'blue',
  devstack: 'green',
};

// pino's numeric levels; services may also log the names themselves.
const LEVEL_NAMES: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const LEVEL_COLORS: Record<string, Color> = {
  trace: 'gray',
  debug: 'gray',
  warn: 'yellow',
  warning: 'yellow',
  error: 'red',
  fatal: 'red',
};

// Fields that are already shown (time, level, message) or say nothing in a
// terminal where the prefix names the service. `stack` (winston's errors
// format) is printed below the line instead.
const HIDDEN_FIELDS = new Set([
  'time',
  'timestamp',
  'ts',
  'level',
  'msg',
  'message',
  'pid',
  'hostname',
  'v',
  'service',
  'name',
  'stack',
]);

function paint(text: string, color: Color | undefined, style: LineStyle): string {
  return style.color && color ? `${ANSI[color]}${text}${ANSI.reset}` : text;
}

function label(source: string, style: LineStyle): string {
  return paint(`${source.padEnd(style.labelWidth)} |`, SOURCE_COLORS[source], style);
}

/** One output line of a child process, as printed by the launcher (a stack trace becomes several). */
export function formatServiceLine(source: string, line: string, style: LineStyle): string[] {
  const prefix = label(source, style);
  if (style.format === 'json') return [`${prefix} ${line}`];
  const record = parseJsonObject(line);
  if (!record) return [`${prefix} ${line}`];
  return formatRecord(record, style).map((text) => `${prefix} ${text}`);
}

/** PostgreSQL's own log lines, shortened to the same `time LEVEL message` shape. */
export function formatPostgresLine(line: string, style: LineStyle): string {
  const prefix = label('postgres', style);
  const match = /^\d{4}-\d\d-\d\d (\d\d:\d\d:\d\d)\.\d+ \S+ \[\d+\] ([A-Z]+):\s+(.*)$/.exec(line);
  if (style.format === 'json' || !match) return `${prefix} ${line}`;
  const [, time = '', severity = '', message = ''] = match;
  const level = severity === 'LOG' ? 'info' : severity.toLowerCase();
  return `${prefix} ${paint(time, 'gray', style)} ${paint(level.toUpperCase().padEnd(5), LEVEL_COLORS[level], style)} ${message}`;
}

/** The launcher's own messages. */
export function formatLauncherLine(message: string, style: LineStyle): string {
  return `${label('devstack', style)} ${message}`;
}

function parseJsonObject(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function formatRecord(record: Record<string, unknown>, style: LineStyle): string[] {
  const time = timeOf(record);
  const level = levelOf(record['level']);
  const message = String(record['msg'] ?? record['message'] ?? '');
  const fields = Object.entries(record)
    .filter(([key]) => !HIDDEN_FIELDS.has(key))
    .map(([key, value]) => `${paint(`${key}=`, 'gray', style)}${fieldValue(value)}`);
  const head = [
    time ? paint(time, 'gray', style) : undefined,
    level ? paint(level.toUpperCase().padEnd(5), LEVEL_COLORS[level], style) : undefined,
    message,
    ...fields,
  ].filter((part): part is string => part !== undefined && part !== '');
  return [head.join(' '), ...stackLinesOf(record).map((stackLine) => paint(`    ${stackLine}`, 'gray', style))];
}

function timeOf(record: Record<string, unknown>): string | undefined {
  const raw = record['time'] ?? record['timestamp'] ?? record['ts'];
  if (typeof raw !== 'number' && typeof raw !== 'string') return undefined;
  const date = new Date(raw);
  if (Number.isNaN(date.getTime())) return undefined;
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

function levelOf(raw: unknown): string | undefined {
  if (typeof raw === 'number') return LEVEL_NAMES[raw] ?? String(raw);
  if (typeof raw === 'string') return raw.toLowerCase();
  return undefined;
}

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (isError(value)) return JSON.stringify(value.message ?? value.type ?? 'error');
  return JSON.stringify(value) ?? String(value);
}

interface SerializedError {
  message?: string;
  type?: string;
  stack: string;
}

function isError(value: unknown): value is SerializedError {
  return value !== null && typeof value === 'object' && typeof (value as { stack?: unknown }).stack === 'string';
}

// A serialised error (pino's `err`, winston's top-level `stack`) is shown as
// its message inline and its stack below, rather than one escaped string.
function stackLinesOf(record: Record<string, unknown>): string[] {
  const stack = typeof record['stack'] === 'string' ? record['stack'] : Object.values(record).find(isError)?.stack;
  if (!stack) return [];
  return stack
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .filter(Boolean);
}
