import { Type } from '@sinclair/typebox';
import request from 'supertest';
import {
  keysetQueryProperties,
  listWindow,
  pageQueryProperties,
  pageRequestOf,
  sendPage,
  unknownAfterItem,
} from '../src';
import { bareServiceApp } from './support';

// 60 items, newest first; a list that pages by number and by keyset (`after`).
const ITEMS = Array.from({ length: 60 }, (_, i) => ({
  id: `00000000-0000-4000-8000-${String(60 - i).padStart(12, '0')}`,
}));

function keysetApp() {
  return bareServiceApp('keyset', (api) => {
    api.route({
      method: 'get',
      path: '/items',
      operationId: 'listItems',
      summary: 'List',
      tags: ['Items'],
      scope: null,
      query: Type.Object({ ...pageQueryProperties, ...keysetQueryProperties }),
      responses: { 200: { description: 'A page.' } },
      handler: (req, res, { query }) => {
        const page = pageRequestOf(query);
        // What a repository reads (listWindow): skip/take by number, or the items after `after`.
        const window = listWindow(page);
        let start = window.skip;
        if (window.after !== undefined) {
          const at = ITEMS.findIndex((item) => item.id === window.after);
          if (at < 0) throw unknownAfterItem();
          start = at + 1;
        }
        sendPage(req, res, ITEMS.slice(start, start + window.take), ITEMS.length, page);
      },
    });
  }).app;
}

const links = (header: string | undefined) =>
  Object.fromEntries([...(header ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], m[1]]));

describe('keyset pages (after)', () => {
  test('When a caller follows Link next from page 1 with after, then it walks every item once, each page without `page`, the last without next', async () => {
    const app = keysetApp();
    const first = await request(app).get('/api/v1/items?per_page=25').set('Host', 'api.example');
    expect(first.body).toEqual(
      expect.objectContaining({ pagination: { page: 1, per_page: 25, total: 60, total_pages: 3 } }),
    );
    const seen = first.body.data.map((item: { id: string }) => item.id);
    let url = `/api/v1/items?per_page=25&after=${seen[seen.length - 1]}`;
    for (;;) {
      const page = await request(app).get(url).set('Host', 'api.example');
      expect(page.status).toBe(200);
      expect(page.body.pagination).toEqual({ per_page: 25, total: 60, total_pages: 3 });
      seen.push(...page.body.data.map((item: { id: string }) => item.id));
      const next = links(page.headers['link']).next;
      expect(links(page.headers['link']).first).toBe('http://api.example/api/v1/items?per_page=25&page=1');
      if (!next) break;
      expect(next).toMatch(/^http:\/\/api\.example\/api\/v1\/items\?per_page=25&after=[0-9a-f-]{36}$/);
      url = next.replace('http://api.example', '');
    }
    expect(seen).toEqual(ITEMS.map((item) => item.id));
  });

  test('When after comes with page 2, or names no item, or is no UUID, then 400 naming the field `after`', async () => {
    const app = keysetApp();
    for (const query of [`page=2&after=${ITEMS[3]!.id}`, 'after=00000000-0000-4000-8000-999999999999', 'after=12']) {
      const response = await request(app).get(`/api/v1/items?${query}`);
      expect({ query, status: response.status, type: response.type }).toEqual({
        query,
        status: 400,
        type: 'application/problem+json',
      });
      expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(['after']);
    }
  });

  test('When after is in capitals, then it is the same item (ids compare as values)', async () => {
    const response = await request(keysetApp()).get(`/api/v1/items?per_page=2&after=${ITEMS[0]!.id.toUpperCase()}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(ITEMS.slice(1, 3));
  });
});
