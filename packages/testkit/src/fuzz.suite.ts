import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import fc from 'fast-check';
import { Client } from 'pg';
import request from 'supertest';
import { createConformanceChecker, type Checker } from './openapi-conformance';
import {
  API_PREFIX,
  discoverIds,
  exampleBody,
  fetchOpenApi,
  type KnownIds,
  type OpenApiDocument,
  type OpenApiOperation,
} from './openapi-walk';

/*
 * Fuzzing from the OpenAPI document. For every operation of the service,
 * requests made from its documented example and mutated off it — wrong types, missing and extra
 * fields, huge strings and numbers, unicode edge cases, malformed JSON, wrong content types, path
 * ids that are not UUIDs, junk query parameters; and the families that once caused 500s: UUIDs
 * spelled otherwise (capitals, URN, braces), integers past 2^63, year 0000, bodies nested deep —
 * and for each: never a 5xx, an error is a problem
 * document, the response matches the documented status, content type and schema, and a rejected
 * write leaves every table of the service's database as it was.
 *
 * Bounded in `pnpm test` (FUZZ_RUNS per operation, default 25; seeded, the seed is printed on a
 * failure and FUZZ_SEED replays it); `pnpm fuzz` runs 10,000 per write operation and writes the
 * figures (FUZZ_REPORT_DIR).
 */
export interface FuzzSetup {
  app: http.RequestListener;
  /** `Authorization` of a tenant with every scope of the service and some data of each kind. */
  auth: string;
  /** The service's database: a rejected write must leave its tables as they were. */
  databaseUrl: string;
  close(): Promise<void>;
}

export interface FuzzOptions {
  service: string;
  setup(): Promise<FuzzSetup>;
}

interface FuzzInput {
  path: string;
  query: Record<string, string>;
  body?: { json: unknown } | { raw: string; contentType: string };
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

const runsFor = (method: string) => {
  const base = Number(process.env.FUZZ_RUNS ?? 25);
  const reads = process.env.FUZZ_READ_RUNS ? Number(process.env.FUZZ_READ_RUNS) : Math.min(base, 200);
  return WRITE_METHODS.has(method) ? base : reads;
};

// ---------------------------------------------------------------------------------------------
// What goes in

const UNICODE_EDGES = [
  '\u0000',
  '\uD800',
  '\uDFFF',
  '\u202E',
  'e\u0301',
  '\uFEFF',
  '😀'.repeat(500),
  'Ω≈ç√∫',
  '\u200B',
  'ｆｕｌｌ',
  'ǅ',
  '\r\n\t',
];
// Past 2^63 as well: PostgreSQL's bigint (an OFFSET) ends there.
const HUGE_NUMBERS = [
  1e308,
  -1e308,
  2 ** 53 + 1,
  -(2 ** 63),
  2 ** 63,
  2 ** 64,
  1e20,
  0.1,
  -0,
  1e-320,
  Number.MAX_SAFE_INTEGER,
];
const HUGE_INTEGER_TEXTS = [
  '9223372036854775807',
  '9223372036854775808',
  '99999999999999999999',
  '-9223372036854775809',
  '1e20',
];
// Year 0000 is valid ISO 8601 but not in PostgreSQL.
const YEAR_ZERO = ['0000-01-01', '0000-01', '0000-12-31T23:59:59Z'];
const SOME_UUID = '7a0e1c52-3f9b-4f7e-9c5a-2b8d6e4f1a30';

/**
 * Other spellings of a UUID: capitals and mixed case (the same id), and forms that PostgreSQL's
 * uuid may or may not take but the API does not (URN, braces, no hyphens, padding).
 */
function uuidSpellings(id: string): string[] {
  const mixed = [...id].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
  return [id.toUpperCase(), mixed, `urn:uuid:${id}`, `{${id}}`, id.replace(/-/g, ''), ` ${id}`, `${id}\t`, `${id}-`];
}

/** A spelling of one of `ids` (or of a made-up id when none is known). */
const respelledId = (ids: Iterable<string> | undefined) => {
  const known = [...(ids ?? [])];
  return fc.constantFrom(...(known.length ? known : [SOME_UUID]).flatMap(uuidSpellings));
};

const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(...HUGE_NUMBERS),
  fc.constantFrom(...UNICODE_EDGES),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constant('x'.repeat(100_000)),
  fc.constantFrom(
    null,
    true,
    false,
    [],
    {},
    '',
    ' ',
    '2026-02-30',
    '25:00',
    'not-a-uuid',
    '00000000-0000-0000-0000-000000000000',
  ),
  fc.constantFrom(...YEAR_ZERO, ...HUGE_INTEGER_TEXTS),
  respelledId(undefined),
);

// Not '.' or '..': a client resolves those dot segments before sending, so no server sees them as an id.
const junkId = fc
  .oneof(
    fc.constantFrom(
      'not-a-uuid',
      '123',
      '%00',
      "'; DROP TABLE x;--",
      '😀',
      'a'.repeat(300),
      '00000000-0000-0000-0000-00000000000g',
      ' ',
      '\u0000',
    ),
    fc.constantFrom(...HUGE_INTEGER_TEXTS),
    fc.string({ minLength: 1, maxLength: 40 }),
  )
  .filter((id) => id !== '.' && id !== '..');

const MALFORMED_JSON = [
  '{',
  '{"a":',
  '[1,2',
  'nul',
  '{"a":1}}',
  '\u0000',
  '{"a":"\\ud800"}',
  "{'a':1}",
  '1e99999',
  '{"a":1,}',
];

/** Every place in a JSON value where a mutation can act: the empty path is the value itself. */
function placesOf(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const places = [at];
  if (Array.isArray(value)) value.forEach((item, i) => places.push(...placesOf(item, [...at, i])));
  else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) places.push(...placesOf(item, [...at, key]));
  return places;
}

function mutate(
  base: unknown,
  place: (string | number)[],
  change: 'set' | 'delete' | 'add',
  value: unknown,
  extraKey: string,
): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  if (place.length === 0) return change === 'set' ? value : copy;
  let parent: Record<string | number, unknown> = copy;
  for (const key of place.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = place[place.length - 1]!;
  if (change === 'set') parent[last] = value;
  else if (change === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else {
    const target = parent[last];
    if (target && typeof target === 'object' && !Array.isArray(target))
      (target as Record<string, unknown>)[extraKey] = value;
    else parent[last] = { [extraKey]: value };
  }
  return copy;
}

/**
 * The example with the value at `place` replaced by arrays nested `levels` deep, as raw JSON: the
 * fuzzer's own JSON.stringify could not write 200,000 levels (it recurses), the service must read them.
 */
function deeplyNested(
  example: unknown,
  place: (string | number)[],
  levels: number,
): { raw: string; contentType: string } {
  const marker = '__deeply_nested__';
  const text = JSON.stringify(mutate(example, place, 'set', marker, 'x')) ?? 'null';
  return {
    raw: text.replace(JSON.stringify(marker), () => `${'['.repeat(levels)}${']'.repeat(levels)}`),
    contentType: 'application/json',
  };
}

const isUuid = (value: unknown) =>
  typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

function bodyArbitrary(example: unknown, known: KnownIds): fc.Arbitrary<FuzzInput['body']> {
  const places = placesOf(example);
  // The ids of the example (`client_id`, `ids[0]`, …), respelled: a known id of that field in
  // capitals must find it, a URN or braces must be a 400.
  const idPlaces = places.filter(
    (place) =>
      place.length > 0 &&
      isUuid(place.reduce<unknown>((value, key) => (value as Record<string | number, unknown>)[key], example)),
  );
  const idField = (place: (string | number)[]) => String(place.findLast((key) => typeof key === 'string') ?? '');
  const respelled = idPlaces.length
    ? [
        {
          weight: 2,
          arbitrary: fc.constantFrom(...idPlaces).chain((place) =>
            respelledId(known.byField.get(idField(place))).map((id) => ({
              json: mutate(example, place, 'set', id, 'x'),
            })),
          ),
        },
      ]
    : [];
  return fc.oneof(
    ...respelled,
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...places), fc.constantFrom(65, 1000, 200_000))
        .map(([place, levels]) => deeplyNested(example, place, levels)),
    },
    { weight: 1, arbitrary: fc.constant({ json: example }) },
    {
      weight: 6,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...places),
          fc.constantFrom('set' as const, 'delete' as const, 'add' as const),
          junkValue,
          fc.string({ minLength: 1, maxLength: 12 }),
        )
        .map(([place, change, value, key]) => ({ json: mutate(example, place, change, value, key) })),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((json) => ({ json })) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.constantFrom(...MALFORMED_JSON), fc.string({ maxLength: 30 }))
        .map((raw) => ({ raw, contentType: 'application/json' })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { raw: JSON.stringify(example ?? {}), contentType: 'text/plain' },
        { raw: '<a>1</a>', contentType: 'application/xml' },
        { raw: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
        { raw: JSON.stringify(example ?? {}), contentType: 'application/json; charset=latin1' },
      ),
    },
  );
}

function queryArbitrary(operation: OpenApiOperation, known: KnownIds): fc.Arbitrary<Record<string, string>> {
  const names = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  if (!names.length) return fc.constant({});
  // A `*_id` filter also gets the caller's own ids respelled (in capitals it must filter and count the same).
  const ids = names.filter((name) => name.endsWith('_id')).flatMap((name) => [...(known.byField.get(name) ?? [])]);
  const value = fc.oneof(
    fc.constantFrom(
      '1',
      '0',
      '-1',
      '100',
      '101',
      '1e9',
      'abc',
      '',
      'true',
      '2026-13-01',
      '2026-11',
      'not-a-uuid',
      '00000000-0000-0000-0000-000000000000',
    ),
    fc.constantFrom(...HUGE_INTEGER_TEXTS, ...YEAR_ZERO),
    respelledId(ids),
    // Short ones only: a URL over Node's 16 KB header limit is refused by the HTTP server itself
    // (431, before any route), which says nothing about the API.
    fc.constantFrom(...UNICODE_EDGES.filter((value) => value.length < 100)),
    fc.string({ maxLength: 20 }),
  );
  return fc.dictionary(fc.constantFrom(...names), value, { maxKeys: names.length });
}

function pathArbitrary(template: string, known: KnownIds): fc.Arbitrary<string> | undefined {
  const real = known.concrete(template);
  const segments = template.split('/');
  const params = segments.map((s, i) => (s.startsWith('{') ? i : -1)).filter((i) => i >= 0);
  if (!params.length) return fc.constant(template);
  const realSegments = real?.split('/');
  const ids = fc.constantFrom('real' as const, 'junk' as const, 'respelled' as const);
  return fc.tuple(fc.constantFrom(...params), junkId, ids, fc.nat()).map(([index, junk, kind, pick]) => {
    const out = segments.map((s, i) =>
      s.startsWith('{') ? (realSegments?.[i] ?? '00000000-0000-4000-8000-000000000000') : s,
    );
    if (kind === 'junk' || !realSegments) out[index] = encodeURIComponent(junk);
    else if (kind === 'respelled') {
      // The real id in capitals must find the same resource; a URN or braces must be a 404.
      const spellings = uuidSpellings(realSegments[index]!);
      out[index] = encodeURIComponent(spellings[pick % spellings.length]!);
    }
    return out.join('/');
  });
}

// ---------------------------------------------------------------------------------------------
// What is checked

/** Every table of the service's public schema, as one text: equal before and after means nothing changed. */
async function snapshotTables(pg: Client): Promise<string> {
  const { rows: tables } = await pg.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY tablename`,
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await pg.query<{ digest: string | null }>(
      `SELECT md5(string_agg(to_jsonb(t)::text, ',' ORDER BY to_jsonb(t)::text)) AS digest FROM "${name.replace(/"/g, '""')}" t`,
    );
    parts.push(`${name}:${rows[0]?.digest ?? ''}`);
  }
  return parts.join('\n');
}

/** A snapshot once two taken 50 ms apart agree (at most ~3 s): background work has finished. */
async function settledSnapshot(pg: Client): Promise<string> {
  let previous = await snapshotTables(pg);
  for (let attempt = 0; attempt < 60; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const current = await snapshotTables(pg);
    if (current === previous) return current;
    previous = current;
  }
  return previous;
}

/** The names of the tables whose digest differs between two snapshots. */
function changedTables(before: string, after: string): string[] {
  const earlier = new Set(before.split('\n'));
  return after
    .split('\n')
    .filter((line) => !earlier.has(line))
    .map((line) => line.slice(0, line.indexOf(':')));
}

async function send(app: http.RequestListener, method: string, input: FuzzInput, auth: string) {
  const url = `${API_PREFIX}${input.path}`;
  let call = request(app)[method as 'get'](url).query(input.query).set('Authorization', auth);
  if (input.body && 'json' in input.body)
    call = call.set('Content-Type', 'application/json').send(JSON.stringify(input.body.json) ?? 'null');
  else if (input.body) call = call.set('Content-Type', input.body.contentType).send(input.body.raw);
  return { url, response: await call };
}

function verdict(checker: Checker, method: string, url: string, response: request.Response): string | undefined {
  if (response.status >= 500) return `answered ${response.status}: ${response.text.slice(0, 300)}`;
  if (response.status >= 400 && !/^application\/problem\+json/.test(response.headers['content-type'] ?? '')) {
    return `a ${response.status} that is no problem document (${response.headers['content-type']})`;
  }
  try {
    checker.check(method, url, response);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

interface OperationFigures {
  operation: string;
  runs: number;
  statuses: Record<string, number>;
  ms: number;
}

export function describeFuzz(options: FuzzOptions) {
  describe(`${options.service}: every operation fuzzed from its OpenAPI document`, () => {
    let setup: FuzzSetup;
    let document: OpenApiDocument;
    let known: KnownIds;
    let checker: Checker;
    let pg: Client;

    beforeAll(async () => {
      setup = await options.setup();
      document = await fetchOpenApi(setup.app);
      checker = createConformanceChecker(document as unknown as Record<string, unknown>);
      known = await discoverIds(setup.app, setup.auth, document);
      pg = new Client({ connectionString: setup.databaseUrl });
      await pg.connect();
    }, 120_000);
    afterAll(async () => {
      await pg?.end();
      await setup?.close();
    });

    test(
      'When any operation gets inputs generated from its schema and mutated off it, then it never answers 5xx, ' +
        'errors are problem documents, every response matches the document, and a rejected write changes no table',
      async () => {
        const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
        const failures: string[] = [];
        const figures: OperationFigures[] = [];
        // Whether the last write was accepted (its background work may still be running).
        let settling = false;
        // Deletions last, so the operations below a resource still find it.
        const operations = Object.entries(document.paths)
          .flatMap(([template, methods]) =>
            Object.entries(methods).map(([method, operation]) => ({ template, method, operation })),
          )
          .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
        for (const { template, method, operation } of operations) {
          {
            const paths = pathArbitrary(template, known)!;
            const example = exampleBody(document, operation);
            const input: fc.Arbitrary<FuzzInput> = fc.record({
              path: paths,
              query: queryArbitrary(operation, known),
              body: example === undefined ? fc.constant(undefined) : bodyArbitrary(example, known),
            });
            const statuses: Record<string, number> = {};
            const started = Date.now();
            const numRuns = runsFor(method);
            const result = await fc.check(
              fc.asyncProperty(input, async (generated) => {
                const write = WRITE_METHODS.has(method);
                // An accepted write may start background work (a sync run, a webhook delivery) that
                // changes tables a moment later; it must not be blamed on the next, rejected request.
                const before = write ? (settling ? await settledSnapshot(pg) : await snapshotTables(pg)) : '';
                const { url, response } = await send(setup.app, method, generated, setup.auth);
                if (write) settling = response.status < 400;
                statuses[response.status] = (statuses[response.status] ?? 0) + 1;
                const problem = verdict(checker, method, url, response);
                if (problem) throw new Error(problem);
                if (write && response.status >= 400) {
                  const after = await snapshotTables(pg);
                  if (after !== before)
                    throw new Error(
                      `rejected with ${response.status}, but a table changed: ${changedTables(before, after).join(', ')}`,
                    );
                }
              }),
              { numRuns, seed, endOnFailure: true },
            );
            figures.push({
              operation: `${method.toUpperCase()} ${template}`,
              runs: numRuns,
              statuses,
              ms: Date.now() - started,
            });
            if (result.failed) {
              failures.push(
                `${method.toUpperCase()} ${template} (${operation.operationId}), FUZZ_SEED=${seed}: ` +
                  `${(result.errorInstance as Error | undefined)?.message ?? String(result.errorInstance)}\n` +
                  `  input: ${JSON.stringify(result.counterexample?.[0])?.slice(0, 600)}`,
              );
            }
          }
        }
        if (process.env.FUZZ_REPORT_DIR) {
          fs.mkdirSync(process.env.FUZZ_REPORT_DIR, { recursive: true });
          fs.writeFileSync(
            path.join(process.env.FUZZ_REPORT_DIR, `${options.service}.json`),
            JSON.stringify({ service: options.service, seed, failures, figures }, null, 2),
          );
        }
        expect(failures).toEqual([]);
        expect(figures.length).toBeGreaterThan(0);
      },
      Number(process.env.FUZZ_TIMEOUT_MS ?? 600_000),
    );
  });
}
