import type http from 'node:http';
import request from 'supertest';

/**
 * The tenant wall, walked from the service's own OpenAPI document (issue 10 point 4), so a new
 * route is covered without editing this file:
 * - every operation with an id in its path, given tenant A's id and tenant B's token, answers 404
 *   and changes nothing (A's resource reads the same afterwards);
 * - every list, with B's token, shows none of A's rows;
 * - every list filter that takes an id (`*_id`), given one of A's ids with B's token, answers no
 *   row of A (an empty page, or 400/422).
 * The ids are found by listing with A's token: each list's first row gives the id of the item
 * path below it (`/tickets` → `/tickets/{id}` → `/tickets/{id}/comments` → …). A path whose id
 * cannot be found fails the test: seed that resource for tenant A in `setup`.
 */
export interface TenantWallSetup {
  app: http.RequestListener;
  /** `Authorization` of tenant A, whose resources `setup` created, and of tenant B (every scope of the service). */
  ownerAuth: string;
  otherAuth: string;
  close(): Promise<void>;
}

export interface TenantWallOptions {
  service: string;
  setup(): Promise<TenantWallSetup>;
  /** Operations the walk leaves out, by operationId, each with the reason (shown in the test name). */
  skip?: Record<string, string>;
}

type Operation = {
  operationId: string;
  parameters?: { name: string; in: string; schema?: { type?: string | string[]; format?: string } }[];
  requestBody?: { content?: Record<string, { example?: unknown; examples?: Record<string, { value?: unknown }>; schema?: { examples?: unknown[] } }> };
};
type Document = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, unknown> } };

const isList = (path: string) => !path.endsWith('}');

/** The request body an operation documents, so the 404 is about the tenant and not a 400 about the body. */
function exampleBody(document: Document, operation: Operation): unknown {
  const content = operation.requestBody?.content?.['application/json'];
  if (!content) return undefined;
  if (content.example !== undefined) return content.example;
  const named = Object.values(content.examples ?? {})[0];
  if (named?.value !== undefined) return named.value;
  let schema = content.schema as { $ref?: string; examples?: unknown[] } | undefined;
  if (schema?.$ref) schema = document.components?.schemas?.[schema.$ref.split('/').pop()!] as typeof schema;
  return schema?.examples?.[0] ?? {};
}

function rowsOf(body: unknown): Record<string, unknown>[] {
  const data = (body as { data?: unknown })?.data;
  return Array.isArray(data) ? (data as Record<string, unknown>[]) : [];
}

export function describeTenantWall(options: TenantWallOptions) {
  describe(`${options.service}: the tenant wall, on every route of its OpenAPI document`, () => {
    let wall: TenantWallSetup;
    let document: Document;
    /** Item path template (`/tickets/{id}`) → one id of tenant A. */
    const ownerIds = new Map<string, string>();
    /** Every id and every `*_id` value seen in tenant A's lists. */
    const ownerValues = new Set<string>();
    const idsByField = new Map<string, Set<string>>();

    /** The template with tenant A's ids in place of its parameters, or undefined while one is unknown. */
    const concrete = (template: string): string | undefined => {
      const segments = template.split('/');
      const filled: string[] = [];
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i]!;
        if (!segment.startsWith('{')) {
          filled.push(segment);
          continue;
        }
        const id = ownerIds.get(segments.slice(0, i + 1).join('/'));
        if (!id) return undefined;
        filled.push(id);
      }
      return filled.join('/');
    };

    beforeAll(async () => {
      wall = await options.setup();
      document = (await request(wall.app).get('/api/v1/openapi.json')).body as Document;
      const lists = Object.entries(document.paths).filter(([path, methods]) => isList(path) && methods['get']).map(([path]) => path);
      // Nested lists need their parent's id first: repeat until a pass finds nothing new.
      for (let progress = true; progress; ) {
        progress = false;
        for (const list of lists) {
          const path = concrete(list);
          if (!path) continue;
          const itemTemplate = Object.keys(document.paths).find((p) => /^\{[^/}]+\}$/.test(p.slice(list.length + 1)) && p.startsWith(`${list}/`));
          const response = await request(wall.app).get(`/api/v1${path}`).set('Authorization', wall.ownerAuth);
          for (const row of rowsOf(response.body)) {
            for (const [field, value] of Object.entries(row)) {
              if (typeof value !== 'string' || !(field === 'id' || field.endsWith('_id'))) continue;
              ownerValues.add(value);
              const key = field === 'id' ? list.split('/').pop()! : field;
              if (!idsByField.has(key)) idsByField.set(key, new Set());
              idsByField.get(key)!.add(value);
            }
          }
          const first = rowsOf(response.body)[0];
          if (itemTemplate && first && typeof first['id'] === 'string' && !ownerIds.has(itemTemplate)) {
            ownerIds.set(itemTemplate, first['id']);
            progress = true;
          }
        }
      }
    }, 120_000);
    afterAll(() => wall?.close());

    test('When tenant B names one of tenant A\'s ids in any path, with any method, then it gets 404 and A\'s resource is unchanged', async () => {
      const unresolved: string[] = [];
      const wrong: string[] = [];
      let walked = 0;
      for (const [template, methods] of Object.entries(document.paths)) {
        if (!template.includes('{')) continue;
        const path = concrete(template);
        const operations = Object.entries(methods).filter(([, op]) => !options.skip?.[op.operationId]);
        if (!operations.length) continue;
        if (!path) {
          unresolved.push(template);
          continue;
        }
        // Only paths with a write are compared: a read-only path may change by itself (a health's checked_at).
        walked += operations.length;
        const readable = Boolean(methods['get']) && operations.some(([method]) => method !== 'get');
        const before = readable ? await request(wall.app).get(`/api/v1${path}`).set('Authorization', wall.ownerAuth) : undefined;
        for (const [method, operation] of operations) {
          let call = request(wall.app)[method as 'get'](`/api/v1${path}`).set('Authorization', wall.otherAuth);
          const body = exampleBody(document, operation);
          if (body !== undefined) call = call.send(body as object);
          const response = await call;
          if (response.status !== 404) wrong.push(`${method.toUpperCase()} ${template} (${operation.operationId}): ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
        }
        if (before) {
          const after = await request(wall.app).get(`/api/v1${path}`).set('Authorization', wall.ownerAuth);
          if (after.status !== before.status || JSON.stringify(after.body) !== JSON.stringify(before.body)) {
            wrong.push(`${template}: tenant A's resource changed after tenant B's calls`);
          }
        }
      }
      expect(unresolved).toEqual([]);
      expect(wrong).toEqual([]);
      expect(walked).toBeGreaterThan(0);
    });

    test('When tenant B lists anything, then none of tenant A\'s rows appear; filters given A\'s ids return none of them either', async () => {
      const leaks: string[] = [];
      for (const [template, methods] of Object.entries(document.paths)) {
        const operation = methods['get'];
        if (!isList(template) || template.includes('{') || !operation || options.skip?.[operation.operationId]) continue;
        const listed = await request(wall.app).get(`/api/v1${template}`).set('Authorization', wall.otherAuth);
        for (const row of rowsOf(listed.body)) if (typeof row['id'] === 'string' && ownerValues.has(row['id'])) leaks.push(`${template}: ${row['id']}`);
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== 'query' || !parameter.name.endsWith('_id')) continue;
          const resource = `${parameter.name.slice(0, -3)}s`;
          const candidates = [...(idsByField.get(parameter.name) ?? []), ...(idsByField.get(resource) ?? [])].slice(0, 3);
          for (const value of candidates) {
            const filtered = await request(wall.app).get(`/api/v1${template}`).query({ [parameter.name]: value }).set('Authorization', wall.otherAuth);
            if (filtered.status >= 500) leaks.push(`${template}?${parameter.name}=${value}: ${filtered.status}`);
            for (const row of rowsOf(filtered.body)) leaks.push(`${template}?${parameter.name}=${value}: row ${String(row['id'])}`);
          }
        }
      }
      expect(leaks).toEqual([]);
    });
  });
}
