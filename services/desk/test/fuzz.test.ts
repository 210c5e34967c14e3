import request from 'supertest';
import { describeFuzz } from '@msp/testkit';
import { startDesk } from './support/desk';
import { BASE, bearer, newTenant, unique, uniqueEmail } from './support/helpdesk';

describeFuzz({
  service: 'desk',
  async setup() {
    // Limits high enough that the fuzzer measures the routes, not the rate limiter.
    const desk = await startDesk({ rateLimitPerMinute: 10_000_000, tokenRateLimitPerMinute: 10_000_000 });
    const tenant = await newTenant(desk);
    const post = async (path: string, body: object) =>
      (await request(desk.app).post(`${BASE}${path}`).set(bearer(tenant.token)).send(body).expect(201)).body as { id: string };
    const client = await post('/clients', { name: unique('Client') });
    const user = await post('/users', { name: unique('Tech'), email: uniqueEmail() });
    const ticket = await post('/tickets', { title: unique('Printer jams'), client_id: client.id, assignee_id: user.id });
    await post(`/tickets/${ticket.id}/comments`, { body: 'Toner replaced.' });
    await post('/api-clients', { name: unique('Reporting'), scopes: ['read:tickets'] });
    return { app: desk.app, auth: `Bearer ${tenant.token}`, databaseUrl: desk.databaseUrl, close: () => desk.close() };
  },
});
