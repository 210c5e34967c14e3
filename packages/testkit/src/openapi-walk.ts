import type http from 'node:http';
import request from 'supertest';

/*
 * Walking a service through its own OpenAPI document, for the suites that must cover every route
 * without being edited when a route is added (the tenant wall, the fuzzer): the document, the
 * documented example of a request body, and real ids found by listing.
 */

export type OpenApiOperation = {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: {
    content?: Record<
      string,
      {
        example?: unknown;
        examples?: Record<string, { value?: unknown }>;
        schema?: { $ref?: string; examples?: unknown[] };
      }
    >;
  };
};
export type OpenApiDocument = {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown> };
};

export const API_PREFIX = '/api/v1';

export async function fetchOpenApi(app: http.RequestListener): Promise<OpenApiDocument> {
  return (await request(app).get(`${API_PREFIX}/openapi.json`)).body as OpenApiDocument;
}

/** A path that names a collection (`/tickets`, `/tickets/{id}/comments`), not one item. */
export const isCollection = (template: string) => !template.endsWith('}');

/** The request body an operation documents (its example), or undefined when it takes none. */
export function exampleBody(document: OpenApiDocument, operation: OpenApiOperation): unknown {
  const content = operation.requestBody?.content?.['application/json'];
  if (!content) return undefined;
  if (content.example !== undefined) return content.example;
  const named = Object.values(content.examples ?? {})[0];
  if (named?.value !== undefined) return named.value;
  let schema = content.schema;
  if (schema?.$ref) schema = document.components?.schemas?.[schema.$ref.split('/').pop()!] as typeof schema;
  return schema?.examples?.[0] ?? {};
}

export function rowsOf(body: unknown): Record<string, unknown>[] {
  const data = (body as { data?: unknown })?.data;
  return Array.isArray(data) ? (data as Record<string, unknown>[]) : [];
}

export interface KnownIds {
  /** Item path template (`/tickets/{id}`) → one id of the caller. */
  items: Map<string, string>;
  /** Every `id` and `*_id` value seen in the caller's lists, by field (`id` counts under the collection's name). */
  byField: Map<string, Set<string>>;
  /** The template with the caller's ids in place of its parameters; undefined while one is unknown. */
  concrete(template: string): string | undefined;
}

/**
 * Lists every collection with the caller's token: each list's first row gives the id of the item
 * path below it (`/tickets` → `/tickets/{id}` → `/tickets/{id}/comments` → …), repeated until a
 * pass finds nothing new.
 */
export async function discoverIds(
  app: http.RequestListener,
  auth: string,
  document: OpenApiDocument,
): Promise<KnownIds> {
  const items = new Map<string, string>();
  const byField = new Map<string, Set<string>>();
  const concrete = (template: string): string | undefined => {
    const segments = template.split('/');
    const filled: string[] = [];
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      if (!segment.startsWith('{')) {
        filled.push(segment);
        continue;
      }
      const id = items.get(segments.slice(0, i + 1).join('/'));
      if (!id) return undefined;
      filled.push(id);
    }
    return filled.join('/');
  };
  const lists = Object.entries(document.paths)
    .filter(([path, methods]) => isCollection(path) && methods['get'])
    .map(([path]) => path);
  for (let progress = true; progress;) {
    progress = false;
    for (const list of lists) {
      const path = concrete(list);
      if (!path) continue;
      const itemTemplate = Object.keys(document.paths).find(
        (p) => p.startsWith(`${list}/`) && /^\{[^/}]+\}$/.test(p.slice(list.length + 1)),
      );
      const response = await request(app).get(`${API_PREFIX}${path}`).set('Authorization', auth);
      const rows = rowsOf(response.body);
      for (const row of rows) {
        for (const [field, value] of Object.entries(row)) {
          if (typeof value !== 'string' || !(field === 'id' || field.endsWith('_id'))) continue;
          const key = field === 'id' ? list.split('/').pop()! : field;
          if (!byField.has(key)) byField.set(key, new Set());
          byField.get(key)!.add(value);
        }
      }
      const first = rows[0];
      if (itemTemplate && first && typeof first['id'] === 'string' && !items.has(itemTemplate)) {
        items.set(itemTemplate, first['id']);
        progress = true;
      }
    }
  }
  return { items, byField, concrete };
}
