import request from 'supertest';
import { describeTenantWall } from '@msp/testkit';
import { startDesk } from './support/desk';
import { BASE, bearer, newTenant, unique, uniqueEmail } from './support/helpdesk';

describeTenantWall({
  service: 'desk',
  skip: {},
  async setup() {
    const desk = await startDesk();
    const owner = await newTenant(desk);
    const other = await newTenant(desk);
    // Both tenants hold a client, a technician, a ticket with a comment and a second API client.
    for (const tenant of [owner, other]) {
      const post = async (path: string, body: object) =>
        (await request(desk.app).post(`${BASE}${path}`).set(bearer(tenant.token)).send(body).expect(201)).body as { id: string };
      const client = await post('/clients', { name: unique('Client') });
      const user = await post('/users', { name: unique('Tech'), email: uniqueEmail() });
      const ticket = await post('/tickets', { title: unique('Printer jams'), client_id: client.id, assignee_id: user.id });
      await post(`/tickets/${ticket.id}/comments`, { body: 'Toner replaced.' });
      await post('/api-clients', { name: unique('Reporting'), scopes: ['read:tickets'] });
    }
    return { app: desk.app, ownerAuth: `Bearer ${owner.token}`, otherAuth: `Bearer ${other.token}`, close: () => desk.close() };
  },
});
