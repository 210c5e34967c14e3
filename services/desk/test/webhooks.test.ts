import request from 'supertest';
import { createServiceDispatcher } from '@msp/events';
import { describeWebhooks } from '@msp/testkit';
import { rawSqlOverKysely } from '@msp/db';
import { createDb } from '../src/db';
import { startDesk } from './support/desk';
import { BASE, bearer, createClient, unique } from './support/helpdesk';
import { api } from './support/api';

describeWebhooks({
  service: 'desk',
  createServiceDispatcher,
  // The names, exactly; the first is what trigger() produces.
  events: [
    'ticket.created',
    'ticket.updated',
    'ticket.sla_breached',
    'ticket.merged',
    'comment.created',
    'client.created',
    'client.updated',
    'user.created',
    'user.updated',
    'user.deactivated',
    'time_entry.created',
    'time_entry.updated',
    'time_entry.deleted',
    'calendar.created',
    'calendar.updated',
    'calendar.deleted',
    'sla_policy.created',
    'sla_policy.updated',
    'sla_policy.deleted',
    'contact.created',
    'contact.updated',
    'contact.deleted',
    'mailbox.failing',
    'mailbox.recovered',
    'email.received',
    'email.quarantined',
    'email.sent',
    'email.failed',
    'email.bounced',
  ],
  async setup() {
    const desk = await startDesk();
    const admin = await desk.createClient();
    const adminToken = await desk.token(admin);
    const reader = await desk.createClient({ tenant: admin.tenant, scopes: ['read:tickets'] });
    const client = await createClient(api(desk), adminToken);
    return {
      app: desk.app,
      adminAuth: `Bearer ${adminToken}`,
      adminClientId: admin.clientId,
      readerAuth: `Bearer ${await desk.token(reader)}`,
      async trigger() {
        const response = await request(desk.app)
          .post(`${BASE}/tickets`)
          .set(bearer(adminToken))
          .send({ title: unique('Printer jams'), client_id: client.id });
        expect(response.status).toBe(201);
        return { type: 'ticket.created', resourceType: 'ticket', resourceId: response.body.id, response };
      },
      databaseUrl: desk.databaseUrl,
      // Another process's dispatcher: its own database, handed to @msp/events as the app hands it.
      createDb: (url: string) => {
        const database = createDb(url);
        return Object.assign(rawSqlOverKysely(database.db), { $disconnect: () => database.close() });
      },
      close: () => desk.close(),
    };
  },
});
