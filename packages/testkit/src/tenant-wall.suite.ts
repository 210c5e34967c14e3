import type http from 'node:http';
import request from 'supertest';
import {
  discoverIds,
  exampleBody,
  fetchOpenApi,
  isCollection,
  rowsOf,
  type KnownIds,
  type OpenApiDocument,
} from './openapi-walk';

/**
 * The tenant wall, walked from the service's own OpenAPI document, so a new
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

export function describeTenantWall(options: TenantWallOptions) {
  describe(`${options.service}: the tenant wall, on every route of its OpenAPI document`, () => {
    let wall: TenantWallSetup;
    let document: OpenApiDocument;
    let owner: KnownIds;
    /** Every id and every `*_id` value seen in tenant A's lists. */
    const ownerValues = new Set<string>();

    beforeAll(async () => {
      wall = await options.setup();
      document = await fetchOpenApi(wall.app);
      owner = await discoverIds(wall.app, wall.ownerAuth, document);
      for (const values of owner.byField.values()) for (const value of values) ownerValues.add(value);
    }, 120_000);
    afterAll(() => wall?.close());

    test("When tenant B names one of tenant A's ids in any path, with any method, then it gets 404 and A's resource is unchanged", async () => {
      const unresolved: string[] = [];
      const wrong: string[] = [];
      let walked = 0;
      for (const [template, methods] of Object.entries(document.paths)) {
        if (!template.includes('{')) continue;
        const path = owner.concrete(template);
        const operations = Object.entries(methods).filter(([, op]) => !options.skip?.[op.operationId]);
        if (!operations.length) continue;
        if (!path) {
          unresolved.push(template);
          continue;
        }
        // Only paths with a write are compared: a read-only path may change by itself (a health's checked_at).
        walked += operations.length;
        const readable = Boolean(methods['get']) && operations.some(([method]) => method !== 'get');
        const before = readable
          ? await request(wall.app).get(`/api/v1${path}`).set('Authorization', wall.ownerAuth)
          : undefined;
        for (const [method, operation] of operations) {
          let call = request(wall.app)[method as 'get'](`/api/v1${path}`).set('Authorization', wall.otherAuth);
          const body = exampleBody(document, operation);
          if (body !== undefined) call = call.send(body as object);
          const response = await call;
          if (response.status !== 404)
            wrong.push(
              `${method.toUpperCase()} ${template} (${operation.operationId}): ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`,
            );
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

    test("When tenant B lists anything, then none of tenant A's rows appear; filters given A's ids return none of them either", async () => {
      const leaks: string[] = [];
      for (const [template, methods] of Object.entries(document.paths)) {
        const operation = methods['get'];
        if (!isCollection(template) || template.includes('{') || !operation || options.skip?.[operation.operationId])
          continue;
        const listed = await request(wall.app).get(`/api/v1${template}`).set('Authorization', wall.otherAuth);
        for (const row of rowsOf(listed.body))
          if (typeof row['id'] === 'string' && ownerValues.has(row['id'])) leaks.push(`${template}: ${row['id']}`);
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== 'query' || !parameter.name.endsWith('_id')) continue;
          const resource = `${parameter.name.slice(0, -3)}s`;
          const candidates = [
            ...(owner.byField.get(parameter.name) ?? []),
            ...(owner.byField.get(resource) ?? []),
          ].slice(0, 3);
          for (const value of candidates) {
            const filtered = await request(wall.app)
              .get(`/api/v1${template}`)
              .query({ [parameter.name]: value })
              .set('Authorization', wall.otherAuth);
            if (filtered.status >= 500) leaks.push(`${template}?${parameter.name}=${value}: ${filtered.status}`);
            for (const row of rowsOf(filtered.body))
              leaks.push(`${template}?${parameter.name}=${value}: row ${String(row['id'])}`);
          }
        }
      }
      expect(leaks).toEqual([]);
    });
  });
}
