import type http from 'node:http';
import request from 'supertest';

/**
 * One webhook and one delivery (a queued `webhook.test`) in the tenant of `auth` (which needs
 * `admin:tenant`), so suites that walk the OpenAPI document find an id for every webhook path.
 */
export async function seedWebhook(
  app: http.RequestListener,
  auth: string,
): Promise<{ webhookId: string; deliveryId: string }> {
  const created = await request(app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: 'https://hooks.example.com/seed', events: ['*'], description: 'seed' })
    .expect(201);
  const queued = await request(app)
    .post(`/api/v1/webhooks/${created.body.id}/test`)
    .set('Authorization', auth)
    .expect(202);
  return { webhookId: created.body.id, deliveryId: queued.body.id };
}
