import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describeTenantWall, seedWebhook } from '@msp/testkit';
import { startHr } from './support/hr';

describeTenantWall({
  service: 'hr',
  async setup() {
    const hr = await startHr();
    const scope = 'read:hr write:hr read:payroll admin:tenant';
    const ownerAuth = `Bearer ${hr.token({ scope })}`;
    const otherAuth = `Bearer ${hr.token({ scope })}`;
    // Both tenants hold an employee with a sheet and a leave, so B's lists are not trivially empty.
    for (const auth of [ownerAuth, otherAuth]) {
      const userId = randomUUID();
      const post = (path: string, body: object) => request(hr.app).post(`/api/v1${path}`).set('Authorization', auth).send(body).expect(201);
      await post('/employees', { user_id: userId, personnel_number: '4711', name: 'Erika Mustermann' });
      await post('/timesheets', { user_id: userId, date: '2026-11-02', entries: [{ start: '08:00', end: '12:00', category: 'normal' }] });
      await post('/leaves', { user_id: userId, type: 'vacation', start_date: '2026-12-21', end_date: '2026-12-23' });
      await seedWebhook(hr.app, auth);
    }
    return { app: hr.app, ownerAuth, otherAuth, close: () => hr.close() };
  },
});
