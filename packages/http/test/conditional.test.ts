import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { etagOf } from '../src';
import { bareServiceApp, kitApp } from './support';

const AUTH = { Authorization: 'Bearer alice:read:things' };

describe('ETag, If-None-Match and If-Match', () => {
  test('When one resource is read, then its ETag is strong and is the one etagOf computes; a current If-None-Match gets 304', async () => {
    const { app } = kitApp();
    const read = await request(app).get('/api/v1/things/1').set(AUTH);
    expect(read.headers['etag']).toMatch(/^"[^"]+"$/);
    expect(read.headers['etag']).toBe(etagOf(read.body));
    const again = await request(app).get('/api/v1/things/1').set(AUTH).set('If-None-Match', read.headers['etag']!);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  test(
    "When Node's own fetch sends If-None-Match (adding Cache-Control: no-cache), then the " +
      'service still evaluates it: 304 when current, 200 when stale',
    async () => {
      const server = http.createServer(kitApp().app).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/things/1`;
        const first = await fetch(url, { headers: AUTH });
        const tag = first.headers.get('etag')!;
        expect(first.status).toBe(200);
        const again = await fetch(url, { headers: { ...AUTH, 'If-None-Match': tag } });
        expect(again.status).toBe(304);
        expect(await again.text()).toBe('');
        const weak = await fetch(url, { headers: { ...AUTH, 'If-None-Match': `"other", W/${tag}` } });
        expect(weak.status).toBe(304); // If-None-Match compares weakly (RFC 9110 §13.1.2)
        const stale = await fetch(url, { headers: { ...AUTH, 'If-None-Match': '"stale"' } });
        expect(stale.status).toBe(200);
        expect(await stale.json()).toEqual(await first.json());
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );

  test('When a change carries a stale, weak or current If-Match, then 412 (nothing changed), 412, and 200 with the new ETag; * matches', async () => {
    const { app } = kitApp();
    const tag = (await request(app).get('/api/v1/things/1').set(AUTH)).headers['etag']!;
    const stale = await request(app).patch('/api/v1/things/1').set(AUTH).set('If-Match', '"stale"').send({ name: 'x' });
    expect(stale.status).toBe(412);
    expect(stale.body.type).toBe('urn:msp:problem:precondition-failed');
    expect((await request(app).get('/api/v1/things/1').set(AUTH)).headers['etag']).toBe(tag);
    expect(
      (await request(app).patch('/api/v1/things/1').set(AUTH).set('If-Match', `W/${tag}`).send({ name: 'x' })).status,
    ).toBe(412);
    const changed = await request(app)
      .patch('/api/v1/things/1')
      .set(AUTH)
      .set('If-Match', `"other", ${tag}`)
      .send({ name: 'x' });
    expect(changed.status).toBe(200);
    expect(changed.headers['etag']).not.toBe(tag);
    expect(changed.headers['etag']).toBe((await request(app).get('/api/v1/things/1').set(AUTH)).headers['etag']);
    expect(
      (await request(app).patch('/api/v1/things/1').set(AUTH).set('If-Match', '*').send({ name: 'y' })).status,
    ).toBe(200);
  });

  test('When two changes hold the same current tag at once, then one is made and the other is 412', async () => {
    const { app } = kitApp({ createDelayMs: 200 });
    const tag = (await request(app).get('/api/v1/things/1').set(AUTH)).headers['etag']!;
    const [a, b] = await Promise.all([
      request(app).patch('/api/v1/things/1').set(AUTH).set('If-Match', tag).send({ name: 'a' }),
      request(app).patch('/api/v1/things/1').set(AUTH).set('If-Match', tag).send({ name: 'b' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 412]);
    expect((await request(app).get('/api/v1/things/1').set(AUTH)).body.version).toBe(2);
  });

  test(
    "When the resource's GET sets Vary and Content-Language, then a PATCH with If-Match is " +
      'still checked against its loader: 412 when stale, 200 when current',
    async () => {
      const { app } = kitApp();
      const read = await request(app).get('/api/v1/things/1').set(AUTH);
      expect([read.status, read.headers['vary'], read.headers['content-language']]).toEqual([
        200,
        expect.stringContaining('Accept-Language'),
        'en',
      ]);
      const stale = await request(app)
        .patch('/api/v1/things/1')
        .set(AUTH)
        .set('If-Match', '"stale"')
        .send({ name: 'x' });
      expect([stale.status, stale.body.type]).toEqual([412, 'urn:msp:problem:precondition-failed']);
      const changed = await request(app)
        .patch('/api/v1/things/1')
        .set(AUTH)
        .set('If-Match', read.headers['etag']!)
        .send({ name: 'changed' });
      expect([changed.status, changed.body.name]).toEqual([200, 'changed']);
      const after = await request(app).get('/api/v1/things/1').set(AUTH);
      expect([after.body.name, after.headers['etag']]).toEqual(['changed', changed.headers['etag']]);
    },
  );

  test('When a GET that shares its path with a write has no loader, then the router refuses it at start', () => {
    expect(() =>
      bareServiceApp('kit', (api) => {
        api.route({
          method: 'patch',
          path: '/x/:id',
          operationId: 'px',
          summary: 'x',
          tags: ['X'],
          scope: null,
          responses: { 200: { description: 'x' } },
          handler: (_req, res) => res.json({}),
        });
        api.route({
          method: 'get',
          path: '/x/:id',
          operationId: 'gx',
          summary: 'x',
          tags: ['X'],
          scope: null,
          responses: { 200: { description: 'x' } },
          handler: (_req, res) => res.json({}),
        });
      }),
    ).toThrow(/GET needs a load function/);
  });

  test('When the resource does not exist, then If-Match does not hide the 404', async () => {
    const { app } = kitApp();
    expect(
      (await request(app).patch('/api/v1/things/9').set(AUTH).set('If-Match', '"x"').send({ name: 'x' })).status,
    ).toBe(404);
  });
});
