import type { RequestHandler } from 'express';
import request from 'supertest';
import { bareServiceApp } from './support';

describe('the middleware every API request passes before its route', () => {
  test(
    'When verifying the caller fails with an error of its own (a rejected promise), then ' +
      'the request gets a 500 problem document and the service goes on',
    async () => {
      const failing: RequestHandler = async (req) => {
        if (req.get('authorization')) throw new Error('the token store is gone');
      };
      const { app } = bareServiceApp(
        'chain',
        (api) =>
          api.route({
            method: 'get',
            path: '/open',
            operationId: 'open',
            summary: 'open',
            tags: ['Open'],
            scope: null,
            responses: { 200: { description: 'ok' } },
            handler: (_req, res) => res.json({ ok: true }),
          }),
        {
          rateLimit: { limit: 1_000 },
          authenticate: (req, res, next) => (req.get('authorization') ? failing(req, res, next) : next()),
        },
      );
      const failed = await request(app).get('/api/v1/open').set('Authorization', 'Bearer x');
      expect(failed.status).toBe(500);
      expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(failed.body.detail).not.toMatch(/token store/);
      const fine = await request(app).get('/api/v1/open');
      expect([fine.status, fine.body, fine.headers['x-ratelimit-limit']]).toEqual([200, { ok: true }, '1000']);
    },
  );
});
