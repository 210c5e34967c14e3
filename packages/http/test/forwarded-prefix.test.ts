import { Type } from '@sinclair/typebox';
import request from 'supertest';
import { pageQueryProperties, sendPage } from '../src';
import { bareServiceApp } from './support';

// The compose ingress routes http://localhost:8080/<service>/api/v1/... to the service's /api/v1/...
// and names the prefix it took off in X-Forwarded-Prefix. supertest connects from 127.0.0.1.
function pagedApp(trustProxy?: string) {
  return bareServiceApp(
    'paged',
    (api) => {
      api.route({
        method: 'get',
        path: '/items',
        operationId: 'listItems',
        summary: 'List',
        tags: ['Items'],
        scope: null,
        query: Type.Object(pageQueryProperties),
        responses: { 200: { description: 'A page.' } },
        handler: (req, res, { query }) => sendPage(req, res, [], 60, query),
      });
    },
    { trustProxy },
  ).app;
}

const links = (header: string | undefined) =>
  Object.fromEntries([...(header ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], m[1]]));

describe('X-Forwarded-Prefix from the ingress', () => {
  test('When a trusted proxy forwards a prefix, then the Link header and the OpenAPI server name the address the caller used', async () => {
    const app = pagedApp();
    const page = await request(app)
      .get('/api/v1/items?page=2')
      .set('Host', 'localhost:8080')
      .set('X-Forwarded-Prefix', '/desk');
    expect(page.status).toBe(200);
    expect(links(page.headers['link'])).toEqual({
      first: 'http://localhost:8080/desk/api/v1/items?page=1',
      prev: 'http://localhost:8080/desk/api/v1/items?page=1',
      next: 'http://localhost:8080/desk/api/v1/items?page=3',
      last: 'http://localhost:8080/desk/api/v1/items?page=3',
    });
    const document = await request(app).get('/api/v1/openapi.json').set('X-Forwarded-Prefix', '/desk');
    expect(document.body.servers).toEqual([{ url: '/desk/api/v1' }]);
  });

  test('When no prefix is forwarded, then the links and the OpenAPI server are /api/v1 as before', async () => {
    const app = pagedApp();
    const page = await request(app).get('/api/v1/items?page=3').set('Host', 'desk.localhost:8080');
    expect(links(page.headers['link']).prev).toBe('http://desk.localhost:8080/api/v1/items?page=2');
    expect((await request(app).get('/api/v1/openapi.json')).body.servers).toEqual([{ url: '/api/v1' }]);
  });

  test('When the header comes from an address that is not a trusted proxy, then it is ignored', async () => {
    const app = pagedApp('10.89.8.10');
    const page = await request(app)
      .get('/api/v1/items')
      .set('Host', 'localhost:8080')
      .set('X-Forwarded-Prefix', '/elsewhere');
    expect(links(page.headers['link']).first).toBe('http://localhost:8080/api/v1/items?page=1');
    expect(
      (await request(app).get('/api/v1/openapi.json').set('X-Forwarded-Prefix', '/elsewhere')).body.servers,
    ).toEqual([{ url: '/api/v1' }]);
  });

  test.each(['desk', '/..', '/a/../b', '//evil.example', '/a b', 'http://evil.example/x', '/%2e%2e'])(
    'When a trusted proxy forwards the prefix %j, which is not a plain path, then it is ignored',
    async (prefix) => {
      const page = await request(pagedApp())
        .get('/api/v1/items')
        .set('Host', 'localhost:8080')
        .set('X-Forwarded-Prefix', prefix);
      expect(page.status).toBe(200);
      expect(links(page.headers['link']).first).toBe('http://localhost:8080/api/v1/items?page=1');
    },
  );
});
