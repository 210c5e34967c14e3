import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describeConditionalRequests, describeFuzz, seedWebhook } from '@msp/testkit';
import { startHr } from './support/hr';

async function setup() {
  // A limit high enough that the fuzzer measures the routes, not the rate limiter.
  const hr = await startHr({ settings: { rateLimitPerMinute: 10_000_000 } });
  const auth = `Bearer ${hr.token({ scope: 'read:hr write:hr read:payroll admin:tenant' })}`;
  const userId = randomUUID();
  const post = (path: string, body: object) => request(hr.app).post(`/api/v1${path}`).set('Authorization', auth).send(body).expect(201);
  await post('/employees', { user_id: userId, personnel_number: '4711', name: 'Erika Mustermann' });
  await post('/timesheets', { user_id: userId, date: '2026-11-02', entries: [{ start: '08:00', end: '12:00', category: 'normal' }] });
  await post('/leaves', { user_id: userId, type: 'vacation', start_date: '2026-12-21', end_date: '2026-12-23' });
  await seedWebhook(hr.app, auth);
  return { app: hr.app, auth, databaseUrl: hr.databaseUrl, close: () => hr.close() };
}

describeFuzz({ service: 'hr', setup });
describeConditionalRequests({ service: 'hr', setup });
