/**
 * Bounds a schema already enforces without saying so, written out for the OpenAPI document only:
 * the validator keeps checking the schema as it is, so no request is answered differently and no
 * error list grows. A UUID cannot be longer than 36 characters, nor a string that matches
 * `^[0-9]{1,4}$` longer than 4; tools that read the document (and OWASP's API4 rules) see it.
 */

/** The length of every value of these formats, as validation.ts defines them. */
const FORMAT_MAX_LENGTH: Record<string, number> = {
  uuid: 36,
  date: 10,
  'year-month': 7,
  'hh-mm': 5,
  'hh-mm-start': 5,
};

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * The longest string an anchored pattern (`^…$`) matches, in characters; undefined when it has no
 * longest (`*`, `+`, `{n,}`, no anchors) or uses what this reader does not know (back-references).
 */
export function patternMaxLength(pattern: string): number | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return undefined;
  const reader = { text: pattern.slice(1, -1), at: 0 };
  try {
    const alternatives = readAlternatives(reader);
    // `^a|b$` anchors each end to one alternative only: the other matches inside longer text.
    if (reader.at !== reader.text.length || alternatives.length > 1) return undefined;
    return alternatives[0];
  } catch {
    return undefined;
  }
}

interface Reader {
  text: string;
  at: number;
}

class Unbounded extends Error {}

/** Alternatives up to the closing parenthesis (not consumed) or the end: the longest of each. */
function readAlternatives(reader: Reader): number[] {
  const lengths = [0];
  while (reader.at < reader.text.length && reader.text[reader.at] !== ')') {
    if (reader.text[reader.at] === '|') {
      reader.at += 1;
      lengths.push(0);
      continue;
    }
    const atom = readAtom(reader);
    const last = lengths.length - 1;
    lengths[last] = (lengths[last] ?? 0) + atom * readRepeat(reader);
  }
  return lengths;
}

/** One atom's longest match: a character, an escape, a class or a group. */
function readAtom(reader: Reader): number {
  const char = reader.text[reader.at]!;
  if (char === '(') {
    reader.at += 1;
    let lookaround = false;
    if (reader.text.startsWith('?:', reader.at)) reader.at += 2;
    else if (/^\?<?[=!]/.test(reader.text.slice(reader.at))) {
      reader.at += reader.text[reader.at + 1] === '<' ? 3 : 2;
      lookaround = true;
    } else if (reader.text[reader.at] === '?') throw new Unbounded();
    const inner = Math.max(...readAlternatives(reader));
    if (reader.text[reader.at] !== ')') throw new Unbounded();
    reader.at += 1;
    return lookaround ? 0 : inner;
  }
  if (char === '[') {
    reader.at += 1;
    if (reader.text[reader.at] === '^') reader.at += 1;
    if (reader.text[reader.at] === ']') reader.at += 1;
    while (reader.at < reader.text.length && reader.text[reader.at] !== ']')
      reader.at += reader.text[reader.at] === '\\' ? 2 : 1;
    if (reader.text[reader.at] !== ']') throw new Unbounded();
    reader.at += 1;
    return 1;
  }
  if (char === '\\') {
    const escaped = reader.text[reader.at + 1];
    if (escaped === undefined || /[1-9kbB]/.test(escaped)) throw new Unbounded();
    reader.at += 2;
    if (escaped === 'u') reader.at += 4;
    else if (escaped === 'x') reader.at += 2;
    return 1;
  }
  if ('*+?{}^$'.includes(char)) throw new Unbounded();
  reader.at += 1;
  return 1;
}

/** How many times the atom before may repeat at most: `?` 1, `{n}` n, `{n,m}` m. */
function readRepeat(reader: Reader): number {
  const rest = reader.text.slice(reader.at);
  let times = 1;
  let taken = 0;
  if (rest[0] === '*' || rest[0] === '+') throw new Unbounded();
  if (rest[0] === '?') taken = 1;
  const counted = /^\{(\d+)(?:(,)(\d*))?\}/.exec(rest);
  if (counted) {
    if (counted[2] && !counted[3]) throw new Unbounded();
    times = Number(counted[3] || counted[1]);
    taken = counted[0].length;
  }
  reader.at += taken;
  if (taken && reader.text[reader.at] === '?') reader.at += 1; // lazy: same longest match
  return times;
}

function typeIs(schema: Record<string, unknown>, type: string): boolean {
  return schema['type'] === type || (Array.isArray(schema['type']) && schema['type'].includes(type));
}

/**
 * The emitted schema with the bounds it already has made explicit: `maxLength` of a string from its
 * format or anchored pattern, `maxItems` of an array of distinct values from a list, `format`
 * (int32 or int64) of an integer from its range.
 */
export function withImpliedBounds(schema: Record<string, unknown>): Record<string, unknown> {
  if (
    typeIs(schema, 'string') &&
    schema['maxLength'] === undefined &&
    schema['enum'] === undefined &&
    schema['const'] === undefined
  ) {
    const format = typeof schema['format'] === 'string' ? FORMAT_MAX_LENGTH[schema['format']] : undefined;
    const pattern = typeof schema['pattern'] === 'string' ? patternMaxLength(schema['pattern']) : undefined;
    const longest = format ?? pattern;
    if (longest !== undefined) return { ...schema, maxLength: longest };
  }
  // Each item once, each one of a list of values: no more items than values.
  const items = schema['items'] as Record<string, unknown> | undefined;
  if (
    typeIs(schema, 'array') &&
    schema['maxItems'] === undefined &&
    schema['uniqueItems'] === true &&
    Array.isArray(items?.['enum'])
  ) {
    return { ...schema, maxItems: items['enum'].length };
  }
  if (typeIs(schema, 'integer') && schema['format'] === undefined) {
    const low = schema['minimum'] ?? schema['exclusiveMinimum'];
    const high = schema['maximum'] ?? schema['exclusiveMaximum'];
    const int32 = typeof low === 'number' && typeof high === 'number' && low >= INT32_MIN && high <= INT32_MAX;
    return { ...schema, format: int32 ? 'int32' : 'int64' };
  }
  return schema;
}
