import { randomInt, randomUUID } from 'node:crypto';
import request from 'supertest';
import type { TestHr } from './hr';

// An employee of a fresh tenant with its employment and contracts, and what the working-time
// features need to record for them, all through the API.

const API = '/api/v1';
let nextPersonnelNumber = randomInt(100_000, 900_000);

export interface TestEmployee {
  tenantId: string;
  auth: string;
  id: string;
  userId: string;
}

export const FIVE_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri'];

/** Full time (40 h on Monday to Friday) in `state` from `validFrom`. */
export const fullTime = (state: string, validFrom: string) => ({
  valid_from: validFrom,
  weekly_minutes: 2400,
  working_days: FIVE_DAYS,
  vacation_days_per_year: 30,
  state,
});

export async function employeeWith(
  hr: TestHr,
  employment: { start_date: string; end_date?: string | null } | null,
  contracts: object[],
): Promise<TestEmployee> {
  const tenantId = randomUUID();
  const auth = `Bearer ${hr.token({ tenant_id: tenantId, scope: 'read:hr write:hr' })}`;
  const userId = randomUUID();
  const created = await request(hr.app)
    .post(`${API}/employees`)
    .set('Authorization', auth)
    .send({ user_id: userId, personnel_number: String(nextPersonnelNumber++), name: 'Erika Mustermann' });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  if (employment)
    expect(
      (await request(hr.app).patch(`${API}/employees/${id}`).set('Authorization', auth).send({ employment })).status,
    ).toBe(200);
  for (const terms of contracts)
    expect(
      (await request(hr.app).post(`${API}/employees/${id}/contracts`).set('Authorization', auth).send(terms)).status,
    ).toBe(201);
  return { tenantId, auth, id, userId };
}

/** A day of `minutes` of normal work from 06:00 (with a 45-minute break after 6 h when longer). */
export async function workDay(hr: TestHr, e: TestEmployee, date: string, minutes: number): Promise<void> {
  const time = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  const entries =
    minutes <= 360
      ? [{ start: '06:00', end: time(360 + minutes), category: 'normal' }]
      : [
          { start: '06:00', end: '12:00', category: 'normal' },
          { start: '12:45', end: time(765 + minutes - 360), category: 'normal' },
        ];
  const response = await request(hr.app)
    .post(`${API}/timesheets`)
    .set('Authorization', e.auth)
    .send({ user_id: e.userId, date, entries });
  expect(response.status).toBe(201);
}

/** An approved leave. */
export async function approvedLeave(
  hr: TestHr,
  e: TestEmployee,
  type: string,
  start: string,
  end: string,
): Promise<void> {
  const created = await request(hr.app)
    .post(`${API}/leaves`)
    .set('Authorization', e.auth)
    .send({ user_id: e.userId, type, start_date: start, end_date: end });
  expect(created.status).toBe(201);
  const approved = await request(hr.app)
    .patch(`${API}/leaves/${created.body.id}`)
    .set('Authorization', e.auth)
    .send({ status: 'approved' });
  expect(approved.status).toBe(200);
}

/**
 * Many days at once straight into the table (years of sheets through the API would take minutes):
 * `worked_minutes` as the API would store it, no entries, no warnings.
 */
export async function seedSheets(hr: TestHr, e: TestEmployee, days: { date: string; worked: number }[]): Promise<void> {
  await hr.db.$executeRaw`
    INSERT INTO timesheets (tenant_id, user_id, date, worked_minutes, break_minutes, warnings)
    SELECT ${e.tenantId}::uuid, ${e.userId}::uuid, d.date::date, d.worked, 0, '[]'::jsonb
    FROM unnest(${days.map((d) => d.date)}::text[], ${days.map((d) => d.worked)}::int[]) AS d(date, worked)`;
}
