import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import {
  API_PREFIX,
  discoverIds,
  exampleBody,
  fetchOpenApi,
  type KnownIds,
  type OpenApiDocument,
} from './openapi-walk';

/*
 * ETag / If-Match / If-None-Match on every single resource of the service,
 * walked from its OpenAPI document: each GET of one resource carries a strong ETag and answers 304
 * to a current If-None-Match; each write to that path with a stale If-Match is 412 and changes
 * nothing, and with the current tag it is let through, its answer carrying the new ETag. Given a
 * second instance of the service on the same database, the same tag sent to both at once lets
 * exactly one write through: no lost update across replicas.
 */
export interface ConditionalRequestsSetup {
  app: http.RequestListener;
  /** `Authorization` of a tenant with every scope of the service and one resource of each kind. */
  auth: string;
  /** Another instance of the service over the same database, sharing nothing in memory with `app`. */
  replica?(): Promise<http.RequestListener>;
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

    const items = () =>
      Object.entries(document.paths).filter(([template, methods]) => template.endsWith('}') && methods['get']);
    const get = (path: string) => request(setup.app).get(`${API_PREFIX}${path}`).set('Authorization', setup.auth);

    /** Sends each write to both instances at once with the resource's current tag: exactly one may go through. */
    async function raceFromTwoInstances(methods: string[]) {
      if (!setup.replica) throw new Error(`${options.service}: the setup gives no replica`);
      const replica = await setup.replica();
      const wrong: string[] = [];
      let races = 0;
      for (const wanted of methods) {
        for (const [template, operations] of items()) {
          const path = known.concrete(template);
          if (!path || !operations[wanted]) continue;
          const body = exampleBody(document, operations[wanted]!);
          const tag = (await get(path)).headers['etag']!;
          const write = (app: http.RequestListener) => {
            const sent = request(app)
              [wanted as 'patch'](`${API_PREFIX}${path}`)
              .set('Authorization', setup.auth)
              .set('If-Match', tag);
            return body === undefined ? sent : sent.send(body as object);
          };
          const answers = await Promise.all([write(setup.app), write(replica)]);
          const statuses = answers.map((a) => a.status).sort();
          const through = statuses.filter((s) => s < 300).length;
          // A write its own rules refuse on both (a connector still in use: 409) races nothing.
          if (through === 0 && statuses[0] === statuses[1] && statuses[0] !== 412 && statuses[0]! < 500) continue;
          races += 1;
          // The loser of two deletions finds nothing left to delete: 404 is as good as 412 there.
          const refused = statuses.filter((s) => s === 412 || (wanted === 'delete' && s === 404)).length;
          if (through !== 1 || refused !== 1)
            wrong.push(
              `${wanted.toUpperCase()} ${template} from two instances with one tag: ${statuses.join(' and ')}`,
            );
        }
      }
      return { wrong, races };
    }

    // Before the other writes: the example bodies still change the seeded resources (a write that
    // changes nothing keeps the tag, and then both may rightly go through).
    test(
      'When two instances of the service are sent a change (PATCH, PUT) with the same ' +
        'If-Match at once, then exactly one goes through and the other is 412',
      async () => {
        const { wrong, races } = await raceFromTwoInstances(['patch', 'put']);
        expect(wrong).toEqual([]);
        expect(races).toBeGreaterThan(0);
      },
    );

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
        if (again.status !== 304 || again.text)
          wrong.push(`${template}: If-None-Match with the current tag answered ${again.status}`);
        const stale = await get(path).set('If-None-Match', '"stale"');
        if (stale.status !== 200) wrong.push(`${template}: If-None-Match with a stale tag answered ${stale.status}`);
      }
      expect(wrong).toEqual([]);
      expect(items().length).toBeGreaterThan(0);
    });

    test(
      "When Node's own fetch revalidates one resource (it adds Cache-Control: no-cache to " +
        'If-None-Match), then a current tag still gets 304 and a stale one 200',
      async () => {
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
            if (again.status !== 304 || (await again.text()))
              wrong.push(`${template}: fetch with the current tag answered ${again.status}`);
            const stale = await fetch(url, { headers: { Authorization: setup.auth, 'If-None-Match': '"stale"' } });
            await stale.arrayBuffer();
            if (stale.status !== 200) wrong.push(`${template}: fetch with a stale tag answered ${stale.status}`);
          }
        } finally {
          await new Promise((resolve) => server.close(resolve));
        }
        expect(wrong).toEqual([]);
        expect(items().length).toBeGreaterThan(0);
      },
    );

    test(
      'When a resource is written with a stale If-Match, then 412 and it reads the same afterwards; ' +
        'with its current ETag the write goes through and answers the new ETag',
      async () => {
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
            let stale = request(setup.app)
              [method as 'patch'](`${API_PREFIX}${path}`)
              .set('Authorization', setup.auth)
              .set('If-Match', '"stale"');
            if (body !== undefined) stale = stale.send(body as object);
            const refused = await stale;
            if (refused.status !== 412 || refused.body?.type !== 'urn:msp:problem:precondition-failed')
              wrong.push(`${method.toUpperCase()} ${template} with a stale If-Match: ${refused.status}`);
            const after = await get(path);
            if (after.headers['etag'] !== before.headers['etag'])
              wrong.push(`${method.toUpperCase()} ${template}: changed although refused with 412`);
            // A weak tag never matches (strong comparison).
            const weak = await request(setup.app)
              [method as 'patch'](`${API_PREFIX}${path}`)
              .set('Authorization', setup.auth)
              .set('If-Match', `W/${before.headers['etag']}`)
              .send(body as object);
            if (weak.status !== 412)
              wrong.push(`${method.toUpperCase()} ${template} with a weak If-Match: ${weak.status}`);
            if (method === 'delete') continue;
            let current = request(setup.app)
              [method as 'patch'](`${API_PREFIX}${path}`)
              .set('Authorization', setup.auth)
              .set('If-Match', before.headers['etag']!);
            if (body !== undefined) current = current.send(body as object);
            const passed = await current;
            if (passed.status === 412) wrong.push(`${method.toUpperCase()} ${template} with the current If-Match: 412`);
            if (passed.status === 200) {
              const now = await get(path);
              if (passed.headers['etag'] !== now.headers['etag'])
                wrong.push(
                  `${method.toUpperCase()} ${template}: the write's ETag ${passed.headers['etag']} is not the resource's ${now.headers['etag']}`,
                );
            }
          }
        }
        expect(wrong).toEqual([]);
        expect(writes).toBeGreaterThan(0);
      },
    );

    test(
      'When two instances of the service are sent a DELETE with the same If-Match at ' +
        'once, then exactly one goes through and the other is 412 or 404',
      async () => {
        const { wrong } = await raceFromTwoInstances(['delete']);
        expect(wrong).toEqual([]);
      },
    );
  });
}
