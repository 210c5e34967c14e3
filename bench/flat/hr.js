'use strict';
// hr's lists for the flat-list cases (bench/flat/run.js): one tenant seeded with SQL at
// 10,000 rows per list, or at the large size (1,000,000 timesheets; 100,000 employees, leaves and
// contracts), and the requests to time at both sizes. The triggers of list_counts keep the counters
// while seeding, as they do for the API's writes.
//
// Shape, the same at both sizes:
// - employees: n = 1..size, personnel number n; each has a contract from 2024-01-01, every 10th a
//   second one from 2026-01-01 (contracts: 1.1 × size). user_id and personnel_number are unique, so
//   their filters match one employee at both sizes; the contracts case is employee 10's (2 contracts).
// - timesheets: every working day of the same 100 weeks (500 days, 2025-01-06 to 2026-12-04) for the
//   first size/500 employees (20 at 10k, 2,000 at 1M), 08:00–12:00 and 12:30–16:30. One sheet per
//   user and day, so a user's share cannot stay the same over a fixed period: a user has 500 sheets
//   at both sizes (5 % at 10k, 0.05 % at 1M), and from/to (the last 25 working days, 5 %) match the
//   same share at both sizes.
// - leaves: 50 per user over the same 100 weeks (one every 14 days, 1–5 days long) for the first
//   size/50 employees; types vacation 60 %, sick 20 %, unpaid 10 %, special 10 %; statuses requested
//   20 %, approved 70 %, rejected 5 %, cancelled 5 %; a leave's working days in leave_days.
// Seeding statements insert at most 100,000 rows each (the triggers' transition tables of one
// statement are held as arrays in memory).
const CHUNK = 100_000;
const DAYS = 500; // working days of the period
const LEAVES_PER_USER = 50;

async function seed(client, tenantId, { large }) {
  const sheets = large ? 1_000_000 : 10_000;
  const others = large ? 100_000 : 10_000;
  const q = (text, values) => client.query(text, values);

  for (let first = 1; first <= others; first += CHUNK) {
    await q(
      `INSERT INTO employees (tenant_id, user_id, personnel_number, name, created_at, updated_at)
       SELECT $1, gen_random_uuid(), n::text, 'Employee ' || n, timestamptz '2024-01-01' + n * interval '1 minute', timestamptz '2024-01-01' + n * interval '1 minute'
         FROM generate_series($2::int, $3::int) AS n`,
      [tenantId, first, Math.min(others, first + CHUNK - 1)],
    );
  }
  await q(
    `INSERT INTO contracts (tenant_id, employee_id, valid_from, weekly_minutes, working_days, vacation_days_per_year, state)
     SELECT e.tenant_id, e.id, v.valid_from, 2400, ARRAY['mon','tue','wed','thu','fri'], 30, 'DE-BE'
       FROM employees e CROSS JOIN (VALUES (date '2024-01-01', 1), (date '2026-01-01', 10)) AS v(valid_from, every)
      WHERE e.tenant_id = $1 AND e.personnel_number::int % v.every = 0`,
    [tenantId],
  );

  const users = sheets / DAYS;
  const usersPerChunk = CHUNK / DAYS;
  // Sheet and entry ids in insertion order (a random prefix of this seed, then a counter; still
  // UUIDs of version 4): a million random ids would scatter the inserts over primary keys larger
  // than shared_buffers and make seeding I/O-bound. Reads look an id up the same either way.
  const prefix = async () => (await q(`SELECT left(gen_random_uuid()::text, 24) AS p`)).rows[0].p;
  const sheetPrefix = await prefix();
  const entryPrefix = await prefix();
  for (let first = 1; first <= users; first += usersPerChunk) {
    await q(
      `WITH days AS (SELECT row_number() OVER (ORDER BY d) - 1 AS k, d::date AS day
                       FROM generate_series(date '2025-01-06', date '2026-12-31', interval '1 day') AS d WHERE extract(isodow FROM d) < 6 ORDER BY d LIMIT ${DAYS})
       INSERT INTO timesheets (id, tenant_id, user_id, date, worked_minutes, break_minutes, warnings, created_at, updated_at)
       SELECT ($4 || lpad(to_hex((e.personnel_number::int - 1) * ${DAYS} + days.k), 12, '0'))::uuid,
              e.tenant_id, e.user_id, days.day, 480, 30, '[]', days.day + interval '17 hours', days.day + interval '17 hours'
         FROM employees e CROSS JOIN days
        WHERE e.tenant_id = $1 AND e.personnel_number::int BETWEEN $2 AND $3
        ORDER BY 1`,
      [tenantId, first, Math.min(users, first + usersPerChunk - 1), sheetPrefix],
    );
  }
  await q(
    `INSERT INTO timesheet_entries (id, timesheet_id, position, start_minute, end_minute, minutes, category)
     SELECT ($2 || lpad(to_hex(('x' || right(t.id::text, 12))::bit(48)::bigint * 2 + v.position), 12, '0'))::uuid,
            t.id, v.position, v.start_minute, v.end_minute, v.end_minute - v.start_minute, 'normal'
       FROM timesheets t CROSS JOIN (VALUES (0, 480, 720), (1, 750, 990)) AS v(position, start_minute, end_minute)
      WHERE t.tenant_id = $1
      ORDER BY t.id, v.position`,
    [tenantId, entryPrefix],
  );

  await q(
    `INSERT INTO leaves (tenant_id, user_id, type, status, start_date, end_date, working_days, created_at, updated_at)
     SELECT e.tenant_id, e.user_id,
            (ARRAY['vacation','vacation','vacation','vacation','vacation','vacation','sick','sick','unpaid','special'])[1 + (p.n + k) % 10],
            CASE WHEN k >= 40 THEN 'requested' WHEN (p.n + k) % 20 = 0 THEN 'rejected' WHEN (p.n + k) % 20 = 1 THEN 'cancelled' ELSE 'approved' END,
            d.s, d.s + (p.n + k) % 5,
            (SELECT count(*)::int FROM generate_series(d.s, d.s + (p.n + k) % 5, interval '1 day') AS w WHERE extract(isodow FROM w) < 6),
            d.s - 30, d.s - 30
       FROM employees e
       CROSS JOIN LATERAL (SELECT e.personnel_number::int AS n) AS p
       CROSS JOIN generate_series(0, ${LEAVES_PER_USER - 1}) AS k
       CROSS JOIN LATERAL (SELECT date '2025-01-06' + k * 14 + p.n % 7 AS s) AS d
      WHERE e.tenant_id = $1 AND e.personnel_number::int <= $2`,
    [tenantId, others / LEAVES_PER_USER],
  );
  await q(
    `INSERT INTO leave_days (leave_id, tenant_id, user_id, day)
     SELECT l.id, l.tenant_id, l.user_id, d::date
       FROM leaves l CROSS JOIN generate_series(l.start_date, l.end_date, interval '1 day') AS d
      WHERE l.tenant_id = $1 AND extract(isodow FROM d) < 6`,
    [tenantId],
  );
  // The counters were updated once per statement above: vacuumed, as autovacuum keeps them in use.
  await q('VACUUM ANALYZE list_counts');
  await q('ANALYZE employees, contracts, timesheets, timesheet_entries, leaves, leave_days');

  const one = async (text, values = [tenantId]) => (await q(text, values)).rows[0];
  const employee = await one(
    `SELECT id, user_id, personnel_number FROM employees WHERE tenant_id = $1 AND personnel_number = '10'`,
  );
  const lastEmployees = await one(
    `SELECT id FROM employees WHERE tenant_id = $1 ORDER BY created_at, id OFFSET 10 LIMIT 1`,
  );
  const sheetUser = await one(`SELECT user_id FROM employees WHERE tenant_id = $1 AND personnel_number = $2`, [
    tenantId,
    String(Math.ceil(users / 2)),
  ]);
  const lastSheets = await one(`SELECT id FROM timesheets WHERE tenant_id = $1 ORDER BY date, id OFFSET 10 LIMIT 1`);
  const leaveUser = await one(`SELECT user_id FROM employees WHERE tenant_id = $1 AND personnel_number = $2`, [
    tenantId,
    String(Math.ceil(others / LEAVES_PER_USER / 2)),
  ]);
  const lastLeaves = await one(`SELECT id FROM leaves WHERE tenant_id = $1 ORDER BY start_date, id OFFSET 10 LIMIT 1`);
  return {
    employeeId: employee.id,
    employeeUserId: employee.user_id,
    personnelNumber: employee.personnel_number,
    employeesAfter: lastEmployees.id,
    sheetUserId: sheetUser.user_id,
    // The last 25 working days of the period: 5 % of the sheets at both sizes.
    sheetsFrom: '2026-11-02',
    sheetsTo: '2026-12-04',
    sheetsAfter: lastSheets.id,
    leaveUserId: leaveUser.user_id,
    // Four weeks in the middle of the period.
    leavesFrom: '2025-11-03',
    leavesTo: '2025-11-30',
    leavesAfter: lastLeaves.id,
  };
}

function cases(p) {
  const page = 'per_page=25';
  return [
    `/employees?${page}`,
    `/employees?${page}&user_id=${p.employeeUserId}`,
    `/employees?${page}&personnel_number=${p.personnelNumber}`,
    `/employees?${page}&after=${p.employeesAfter}`,
    `/employees/${p.employeeId}/contracts?${page}`,
    `/timesheets?${page}`,
    `/timesheets?${page}&user_id=${p.sheetUserId}`,
    `/timesheets?${page}&from=${p.sheetsFrom}`,
    `/timesheets?${page}&to=${p.sheetsTo}`,
    `/timesheets?${page}&from=${p.sheetsFrom}&to=${p.sheetsTo}`,
    `/timesheets?${page}&after=${p.sheetsAfter}`,
    `/leaves?${page}`,
    `/leaves?${page}&user_id=${p.leaveUserId}`,
    `/leaves?${page}&status=requested`,
    `/leaves?${page}&type=sick`,
    `/leaves?${page}&from=${p.leavesFrom}`,
    `/leaves?${page}&to=${p.leavesTo}`,
    `/leaves?${page}&from=${p.leavesFrom}&to=${p.leavesTo}`,
    `/leaves?${page}&after=${p.leavesAfter}`,
  ];
}

module.exports = { service: 'hr', scope: 'read:hr write:hr', seed, cases };
