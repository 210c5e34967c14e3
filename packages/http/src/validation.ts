import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { DataValidationCxt } from 'ajv/dist/types';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import type { TSchema } from '@sinclair/typebox';
import type { FieldError } from './errors';

/** ajv-formats' RFC 3339 date-time, the check the bounded one below starts from. */
const rfc3339DateTime = fullFormats['date-time'] as {
  validate: (value: string) => boolean;
  compare: (a: string, b: string) => number | undefined;
};
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** A UUID as the API takes it: 8-4-4-4-12 hex digits, either case (stored and answered in lower case). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    useDefaults: true,
    coerceTypes: coerce,
    // TypeBox adds a symbol-keyed Kind and OpenAPI keywords that ajv should not reject.
    keywords: ['example', 'x-order'],
  });
  addFormats(ajv);
  // The formats above accept 24:00 and leap seconds loosely; these are the exact ones the API documents.
  ajv.addFormat('hh-mm', /^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$/);
  // A start (or any moment) of the day: 24:00 is only ever an end, so a start refuses it.
  ajv.addFormat('hh-mm-start', /^(?:[01]\d|2[0-3]):[0-5]\d$/);
  // Year 0000 is refused as in dates below: PostgreSQL has no year 0.
  ajv.addFormat('year-month', /^(?!0000)\d{4}-(?:0[1-9]|1[0-2])$/);
  // ajv-formats' uuid also takes `urn:uuid:…`, which PostgreSQL's uuid refuses (a 500 there): the
  // canonical 8-4-4-4-12 hex digits only, in either case.
  ajv.addFormat('uuid', UUID_PATTERN);
  // …and lower-cased where it is validated (`x-lowercase`, set by the Uuid schema), so an id
  // compares as a value everywhere after: as a filter, a count's key, against another id.
  ajv.addKeyword({
    keyword: 'x-lowercase',
    type: 'string',
    schemaType: 'boolean',
    modifying: true,
    errors: false,
    validate: (enabled: boolean, data: string, _schema?: unknown, context?: DataValidationCxt) => {
      if (enabled && context?.parentData !== undefined)
        (context.parentData as Record<string | number, unknown>)[context.parentDataProperty] = data.toLowerCase();
      return true;
    },
  });
  // The keys of a map keyed by ids (`x-lowercase-keys`, set by the UuidKeyed schema) are ids too:
  // lower-cased the same way, so that `{"7D0F…": …}` names the ticket `7d0f…` as its path does.
  // Two keys that name one id in different cases are refused, since one of them would be lost.
  ajv.addKeyword({
    keyword: 'x-lowercase-keys',
    type: 'object',
    schemaType: 'boolean',
    modifying: true,
    validate: function lowercaseKeys(enabled: boolean, data: Record<string, unknown>): boolean {
      if (!enabled) return true;
      const keys = Object.keys(data);
      const lower = keys.map((key) => key.toLowerCase());
      const twice = [...new Set(lower.filter((key, index) => lower.indexOf(key) !== index))];
      if (twice.length) {
        (lowercaseKeys as unknown as { errors: Partial<ErrorObject>[] }).errors = [
          {
            keyword: 'x-lowercase-keys',
            message: `names the same id twice (in another letter case): ${twice.join(', ')}`,
            params: { duplicates: twice },
          },
        ];
        return false;
      }
      keys.forEach((key, index) => {
        if (lower[index] === key) return;
        data[lower[index]!] = data[key];
        delete data[key];
      });
      return true;
    },
  });
  // An instant in years 0001–9999 once its offset is applied: PostgreSQL has no year 0, and outside
  // those years Date#toISOString, which writes instants into SQL, writes the year with other than
  // four digits (either a 500 there).
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => {
      if (!rfc3339DateTime.validate(value)) return false;
      const instant = Date.parse(value);
      // A leap second (…:60), which Date cannot parse, is checked by its written year alone.
      return Number.isNaN(instant) ? value.slice(0, 4) !== '0000' : instant >= FIRST_INSTANT && instant <= LAST_INSTANT;
    },
    compare: rfc3339DateTime.compare,
  });
  ajv.addFormat('date', {
    type: 'string',
    validate: (value: string) => {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
      // Year 0000 is valid ISO 8601 (1 BC) but PostgreSQL has no year 0: refused here, not as a 500 there.
      if (!match || match[1] === '0000') return false;
      const date = new Date(`${value}T00:00:00Z`);
      return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
    },
  });
  return ajv;
}

/** Bodies are JSON: a string "5" is not a number. Query and path values are text: they are coerced. */
const bodyAjv = createAjv(false);
const textAjv = createAjv(true);

export type Location = 'body' | 'query' | 'params';

export function compileValidator(schema: TSchema, location: Location): ValidateFunction {
  return (location === 'body' ? bodyAjv : textAjv).compile(schema);
}

/** The formats in words a caller understands. */
const FORMAT_NAMES: Record<string, string> = {
  'hh-mm': 'time of day (HH:MM)',
  'hh-mm-start': 'time of day (HH:MM, 00:00–23:59)',
  'year-month': 'month (YYYY-MM)',
  date: 'date (YYYY-MM-DD)',
};

function pathToField(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (field, segment) => (/^\d+$/.test(segment) ? `${field}[${segment}]` : field ? `${field}.${segment}` : segment),
      '',
    );
}

function join(base: string, name: string) {
  return base ? `${base}.${name}` : name;
}

/** How many arrays and objects a request body may hold one inside the other. */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether a parsed body nests arrays and objects more than `limit` levels deep (the body itself is
 * level 1). A loop with its own stack, never recursion: a body of 200,000 brackets, well under the
 * size limit, would otherwise overflow the call stack of whatever walks it next (a 500). Checked
 * as soon as a body is read, so every later walk (the scan for unstorable text, ajv) is bounded.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (level > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') stack.push([child, level + 1]);
    }
  }
  return false;
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Why PostgreSQL cannot store a text (or a field's name), as the problem document says it, if it cannot. */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  // A UTF-16 surrogate without its pair is no character: JSON carries it as an escape, and
  // PostgreSQL refuses that escape in json and jsonb.
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it holds a lone surrogate, such as \\ud800)';
  return undefined;
}

/**
 * The fields of a request value whose text (or name) PostgreSQL cannot store: the NUL character in
 * any text, a lone surrogate in json. Refused for every route before it reaches a handler: a 400
 * naming the field and why, never a 500 from the database.
 */
export function unstorableFields(value: unknown, field = ''): { field: string; message: string }[] {
  if (typeof value === 'string') {
    const message = unstorable(value);
    return message ? [{ field, message }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => unstorableFields(item, `${field}[${index}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => {
      const message = unstorable(key);
      return message ? [{ field: join(field, key), message }] : unstorableFields(item, join(field, key));
    });
  }
  return [];
}

/** ajv's errors in the shape of the problem document: one entry per field, in words a caller understands. */
export function toFieldErrors(errors: ErrorObject[] | null | undefined, location: Location): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors ?? []) {
    let field = pathToField(error.instancePath);
    let message = error.message ?? 'is not valid';
    // A key of a map that is not what its propertyNames ask (an id map's key that is no id): named as the key.
    const propertyName = (error as { propertyName?: string }).propertyName;
    if (error.keyword === 'propertyNames') continue;
    if (propertyName !== undefined) {
      field = join(field, propertyName);
      message =
        error.keyword === 'format'
          ? 'is not a valid key: it must be a valid ' +
            `${error.params.format === 'uuid' ? 'id (UUID)' : (FORMAT_NAMES[String(error.params.format)] ?? error.params.format)}`
          : `is not a valid key: ${message}`;
    }
    switch (propertyName === undefined ? error.keyword : 'propertyName') {
      case 'required':
        field = join(field, String(error.params.missingProperty));
        message = 'is required';
        break;
      case 'additionalProperties':
        field = join(field, String(error.params.additionalProperty));
        message = 'is not a known field';
        break;
      case 'enum':
        message = `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
        break;
      case 'format':
        message = `must be a valid ${FORMAT_NAMES[String(error.params.format)] ?? error.params.format}`;
        break;
      case 'type':
        message = `must be ${error.params.type === 'integer' ? 'an integer' : `of type ${error.params.type}`}`;
        break;
      case 'anyOf':
      case 'oneOf':
        // Its branches have already said what is wrong.
        if (out.some((e) => e.field === field || e.field.startsWith(`${field}.`))) continue;
        break;
    }
    if (!field) field = location === 'body' ? '(body)' : `(${location})`;
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
  }
  return out;
}
