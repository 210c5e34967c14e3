import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { API_PREFIX, discoverIds, exampleBody, fetchOpenApi, type KnownIds, type OpenApiDocument } from './openapi-walk';

/*
 * ETag / If-Match / If-None-Match on every single resource of the service (issue 11 point 5),
 * walked from its OpenAPI document: each GET of one resource carries a strong ETag and answers 304
 * to a current If-None-Match; each write to that path with a stale If-Match is 412 and changes
 * nothing, and with the current tag it is let through, its answer carrying the new ETag.
 */
export interface ConditionalRequestsSetup {
  app: http.RequestListener;
  /** `Authorization` of a tenant with every scope of the service and one resource of each kind. */
  auth: string;
  close(): Promise<void>;
}

const STRONG = /^"[^"]+"$/;

export function describeConditionalRequests(options: { service: string; setup(): Promise<ConditionalRequestsSetup> }) {
  describe(`${options.service}: ETag, If-None-Match and If-Match on every single resource of its OpenAPI document`, () => {
    let setup: ConditionalRequestsSetup;
    let document: OpenApiDocument;
    let known: KnownIds;

    beforeAll(async () => {
      setup = await options.setup();
      document = await fetchOpenApi(setup.app);
      known = await discoverIds(setup.app, setup.auth, document);
    }, 120_000);
    afterAll(() => setup?.close());

    const items = () => Object.entries(document.paths).filter(([template, methods]) => template.endsWith('}') && methods['get']);
    const get = (path: string) => request(setup.app).get(`${API_PREFIX}${path}`).set('Authorization', setup.auth);

    test('When one resource is read, then it carries a strong ETag, and a current If-None-Match gets 304 without a body', async () => {
      const wrong: string[] = [];
      for (const [template] of items()) {
        const path = known.concrete(template);
        if (!path) {
          wrong.push(`${template}: no id found; seed one`);
          continue;
        }
        const first = await get(path);
        const tag = first.headers['etag'];
        if (first.status !== 200 || !STRONG.test(tag ?? '')) {
          wrong.push(`${template}: ${first.status}, ETag ${tag}`);
          continue;
        }
        const again = await get(path).set('If-None-Match', tag!);
        if (again.status !== 304 || again.text) wrong.push(`${template}: If-None-Match with the current tag answered ${again.status}`);
        const stale = await get(path).set('If-None-Match', '"stale"');
        if (stale.status !== 200) wrong.push(`${template}: If-None-Match with a stale tag answered ${stale.status}`);
      }
      expect(wrong).toEqual([]);
      expect(items().length).toBeGreaterThan(0);
    });

    test("When Node's own fetch revalidates one resource (it adds Cache-Control: no-cache to If-None-Match), then a current tag still gets 304 and a stale one 200", async () => {
      const server = http.createServer(setup.app).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const wrong: string[] = [];
      try {
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const [template] of items()) {
          const path = known.concrete(template);
          if (!path) continue;
          const url = `${origin}${API_PREFIX}${path}`;
          const tag = (await fetch(url, { headers: { Authorization: setup.auth } })).headers.get('etag') ?? '';
          const again = await fetch(url, { headers: { Authorization: setup.auth, 'If-None-Match': tag } });
          if (again.status !== 304 || (await again.text())) wrong.push(`${template}: fetch with the current tag answered ${again.status}`);
          const stale = await fetch(url, { headers: { Authorization: setup.auth, 'If-None-Match': '"stale"' } });
          await stale.arrayBuffer();
          if (stale.status !== 200) wrong.push(`${template}: fetch with a stale tag answered ${stale.status}`);
        }
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
      expect(wrong).toEqual([]);
      expect(items().length).toBeGreaterThan(0);
    });

    test('When a resource is written with a stale If-Match, then 412 and it reads the same afterwards; with its current ETag the write goes through and answers the new ETag', async () => {
      const wrong: string[] = [];
      let writes = 0;
      // Deletions last, so the other writes still find their resource.
      const order = ['patch', 'put', 'delete'];
      for (const [template, methods] of items()) {
        const path = known.concrete(template);
        if (!path) continue;
        for (const method of order.filter((m) => methods[m])) {
          writes += 1;
          const body = exampleBody(document, methods[method]!);
          const before = await get(path);
          let stale = request(setup.app)[method as 'patch'](`${API_PREFIX}${path}`).set('Authorization', setup.auth).set('If-Match', '"stale"');
          if (body !== undefined) stale = stale.send(body as object);
          const refused = await stale;
          if (refused.status !== 412 || refused.body?.type !== 'urn:msp:problem:precondition-failed') wrong.push(`${method.toUpperCase()} ${template} with a stale If-Match: ${refused.status}`);
          const after = await get(path);
          if (after.headers['etag'] !== before.headers['etag']) wrong.push(`${method.toUpperCase()} ${template}: changed although refused with 412`);
          // A weak tag never matches (strong comparison).
          const weak = await request(setup.app)[method as 'patch'](`${API_PREFIX}${path}`).set('Authorization', setup.auth).set('If-Match', `W/${before.headers['etag']}`).send(body as object);
          if (weak.status !== 412) wrong.push(`${method.toUpperCase()} ${template} with a weak If-Match: ${weak.status}`);
          if (method === 'delete') continue;
          let current = request(setup.app)[method as 'patch'](`${API_PREFIX}${path}`).set('Authorization', setup.auth).set('If-Match', before.headers['etag']!);
          if (body !== undefined) current = current.send(body as object);
          const passed = await current;
          if (passed.status === 412) wrong.push(`${method.toUpperCase()} ${template} with the current If-Match: 412`);
          if (passed.status === 200) {
            const now = await get(path);
            if (passed.headers['etag'] !== now.headers['etag']) wrong.push(`${method.toUpperCase()} ${template}: the write's ETag ${passed.headers['etag']} is not the resource's ${now.headers['etag']}`);
          }
        }
      }
      expect(wrong).toEqual([]);
      expect(writes).toBeGreaterThan(0);
    });
  });
}
