import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createServiceDispatcher } from '@msp/events';
import { createLogger } from '@msp/http';
import { createOutbound } from '@msp/outbound';
import { describeWebhooks } from '@msp/testkit';
import { createDb } from '../src/db';
import { startHr } from './support/hr';
import { addEmployee } from './support/callers';

describeWebhooks({
  service: 'hr',
  // The names, exactly; the first is what trigger() produces.
  events: ['timesheet.created', 'timesheet.updated', 'timesheet.deleted', 'leave.requested', 'leave.approved', 'leave.rejected', 'leave.cancelled'],
  async setup() {
    const hr = await startHr();
    const tenantId = randomUUID();
    const adminAuth = `Bearer ${hr.token({ tenant_id: tenantId, scope: 'admin:tenant', sub: 'hr-admin' })}`;
    const userId = await addEmployee(hr, tenantId);
    let day = 1;
    return {
      app: hr.app,
      adminAuth,
      adminClientId: 'hr-admin',
      readerAuth: `Bearer ${hr.token({ tenant_id: tenantId, scope: 'read:hr write:hr' })}`,
      async trigger() {
        // Each call a working day of its own in 2026, so each is a new timesheet.
        const date = new Date(Date.UTC(2026, 0, day++)).toISOString().slice(0, 10);
        const response = await request(hr.app)
          .post('/api/v1/timesheets')
          .set('Authorization', adminAuth)
          .send({ user_id: userId, date, entries: [{ start: '08:00', end: '12:00', category: 'normal' }] });
        expect(response.status).toBe(201);
        return { type: 'timesheet.created', resourceType: 'timesheet', resourceId: response.body.id, response };
      },
      async startDispatcher() {
        const db = createDb(hr.databaseUrl);
        const dispatcher = createServiceDispatcher({
          db,
          databaseUrl: hr.databaseUrl,
          logger: createLogger({ service: 'hr', level: 'error' }),
          outbound: createOutbound({ production: false, timeoutMs: 2_000 }),
          pollMs: 100,
          retryDelaysMs: [200, 200, 200, 200, 200],
        });
        await dispatcher.start();
        return {
          async stop() {
            await dispatcher.stop();
            await db.$disconnect();
          },
        };
      },
      close: () => hr.close(),
    };
  },
});
