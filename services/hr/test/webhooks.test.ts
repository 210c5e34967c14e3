import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { rawSqlOverKysely } from '@msp/db';
import { createServiceDispatcher } from '@msp/events';
import { describeWebhooks } from '@msp/testkit';
import { createDb } from '../src/db';
import { startHr } from './support/hr';
import { addEmployee } from './support/callers';

describeWebhooks({
  service: 'hr',
  createServiceDispatcher,
  // The names, exactly; the first is what trigger() produces.
  events: [
    'timesheet.created',
    'timesheet.updated',
    'timesheet.deleted',
    'leave.requested',
    'leave.approved',
    'leave.rejected',
    'leave.cancelled',
    'contract.created',
    'leave_adjustment.created',
    'leave_settings.updated',
  ],
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
      databaseUrl: hr.databaseUrl,
      // Another process's dispatcher: its own database, handed to @msp/events as the app hands it.
      createDb: (url: string) => {
        const database = createDb(url, { exportConnections: 1 });
        return Object.assign(rawSqlOverKysely(database.db), { $disconnect: () => database.close() });
      },
      close: () => hr.close(),
    };
  },
});
