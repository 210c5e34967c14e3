import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { rawSqlOverKysely } from '@msp/db';
import { createServiceDispatcher } from '@msp/events';
import { describeWebhooks } from '@msp/testkit';
import { createDb } from '../src/db';
import { startLink } from './support/link';

describeWebhooks({
  service: 'link',
  createServiceDispatcher,
  // The names, exactly; the first is what trigger() produces.
  events: [
    'tenant.created',
    'tenant.updated',
    'connector.sync.succeeded',
    'connector.sync.failed',
    'onboarding.completed',
    'onboarding.completed_with_errors',
    'onboarding.failed',
    'onboarding.cancelled',
    'onboarding.retried',
    'offboarding.completed',
    'offboarding.completed_with_errors',
    'offboarding.failed',
    'offboarding.cancelled',
    'offboarding.retried',
    'move.completed',
    'move.completed_with_errors',
    'move.failed',
    'move.cancelled',
    'move.retried',
  ],
  async setup() {
    const link = await startLink({ workers: false });
    const tenantId = randomUUID();
    const adminAuth = `Bearer ${link.token({ tenant_id: tenantId, scope: 'admin:tenant', sub: 'link-admin' })}`;
    let next = 1;
    return {
      app: link.app,
      adminAuth,
      adminClientId: 'link-admin',
      readerAuth: `Bearer ${link.token({ tenant_id: tenantId, scope: 'read:users' })}`,
      async trigger() {
        const response = await request(link.app)
          .post('/api/v1/tenants')
          .set('Authorization', adminAuth)
          .send({ name: `Contoso ${next}`, domain: `contoso${next++}.onmicrosoft.com`, client_id: randomUUID() });
        expect(response.status).toBe(201);
        return { type: 'tenant.created', resourceType: 'tenant', resourceId: response.body.id, response };
      },
      databaseUrl: link.databaseUrl,
      // Each dispatcher on link's database as link opens it, over the events' raw-SQL surface.
      createDb: (databaseUrl: string) => {
        const database = createDb(databaseUrl);
        return Object.assign(rawSqlOverKysely(database.db), { $disconnect: () => database.close() });
      },
      close: () => link.close(),
    };
  },
});
