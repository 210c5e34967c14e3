'use strict';
// The bare baselines of link's and hr's lists: node:http and pg running the SQL the services run
// for the same requests (a page and a count; for timesheets also the page's entries), with no
// framework, authentication, rate limit or validation. Started once per service by run.js with
// BENCH_BASELINE = {service: 'link' | 'hr', databaseUrl, tenantId}.
const http = require('node:http');
const { Pool } = require('pg');

const { service, databaseUrl, tenantId } = JSON.parse(process.env.BENCH_BASELINE);
// pg's default pool size, as the services' PrismaPg adapter uses; their session settings (no JIT,
// no parallel workers: @msp/db createPool), so both sides run the same SQL the same way.
const { SESSION_OPTIONS } = require('../packages/db/dist/index.js');
const pool = new Pool({ connectionString: databaseUrl, max: 10, options: SESSION_OPTIONS });

const iso = (date) => date.toISOString();
const time = (minute) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

/** Each list: its page query, its count and the item as the API writes it. */
const LISTS = {
  link: {
    '/api/v1/tenants': {
      page: `SELECT id, name, domain, client_id, status, created_at, updated_at FROM managed_tenants
             WHERE owner_tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      // The total as link reads it: its counter in list_counts, not count(*), so both sides do the same work.
      count: `SELECT coalesce((SELECT count FROM list_counts WHERE tenant_id = $1::uuid AND list = 'managed_tenants' AND dimension = 'all' AND value = ''), 0) AS count`,
      item: (row) => ({ ...row, created_at: iso(row.created_at), updated_at: iso(row.updated_at) }),
    },
  },
  hr: {
    '/api/v1/employees': {
      // With the contract valid today (one index range per employee), as hr's list runs it.
      page: `SELECT e.*, to_jsonb(cc) AS current_contract FROM (
               SELECT id, tenant_id, user_id, personnel_number, name, to_char(employment_start, 'YYYY-MM-DD') AS employment_start,
                 to_char(employment_end, 'YYYY-MM-DD') AS employment_end, created_at, updated_at FROM employees
               WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) e
             LEFT JOIN LATERAL (SELECT c.id, c.employee_id, to_char(c.valid_from, 'YYYY-MM-DD') AS valid_from, c.weekly_minutes, c.working_days,
                 c.vacation_days_per_year::float8 AS vacation_days_per_year, c.state, c.created_at FROM contracts c
               WHERE c.tenant_id = e.tenant_id AND c.employee_id = e.id AND c.valid_from <= (now() AT TIME ZONE 'UTC')::date ORDER BY c.valid_from DESC LIMIT 1) cc ON true
             ORDER BY e.created_at DESC, e.id DESC`,
      // The total as hr reads it: its counter in list_counts, not count(*), so both sides do the same work.
      count: `SELECT coalesce((SELECT count FROM list_counts WHERE tenant_id = $1::uuid AND list = 'employees' AND dimension = 'all' AND value = ''), 0) AS count`,
      item: (row) => ({
        id: row.id,
        user_id: row.user_id,
        personnel_number: row.personnel_number,
        name: row.name,
        employment: { start_date: row.employment_start, end_date: row.employment_end },
        current_contract: row.current_contract && {
          ...row.current_contract,
          vacation_days_per_year: Number(row.current_contract.vacation_days_per_year),
          created_at: new Date(row.current_contract.created_at).toISOString(),
        },
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
      }),
    },
    '/api/v1/timesheets': {
      // ORDER BY names the table's column: a bare `date` would sort by the text of the output column.
      page: `SELECT id, user_id, date::text AS date, worked_minutes, break_minutes, warnings, created_at, updated_at FROM timesheets
             WHERE tenant_id = $1 ORDER BY timesheets.date DESC, timesheets.id DESC LIMIT $2 OFFSET $3`,
      // The total as hr reads it: its counter in list_counts, not count(*), so both sides do the same work.
      count: `SELECT coalesce((SELECT count FROM list_counts WHERE tenant_id = $1::uuid AND list = 'timesheets' AND dimension = 'all' AND value = ''), 0) AS count`,
      // The page's entries, in one more query, as Prisma loads a relation.
      children: {
        sql: 'SELECT timesheet_id, start_minute, end_minute, minutes, category FROM timesheet_entries WHERE timesheet_id = ANY($1::uuid[]) ORDER BY position',
        key: 'timesheet_id',
      },
      item: (row, entries = []) => ({
        id: row.id,
        user_id: row.user_id,
        date: row.date,
        entries: entries.map((e) => ({
          start: time(e.start_minute),
          end: time(e.end_minute),
          category: e.category,
          minutes: e.minutes,
        })),
        worked_minutes: row.worked_minutes,
        break_minutes: row.break_minutes,
        warnings: row.warnings,
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
      }),
    },
  },
}[service];

function send(res, status, body) {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

async function list(spec, url, res) {
  const perPage = Number(url.searchParams.get('per_page') ?? 25);
  const page = Number(url.searchParams.get('page') ?? 1);
  const [rows, total] = await Promise.all([
    pool.query(spec.page, [tenantId, perPage, (page - 1) * perPage]),
    pool.query(spec.count, [tenantId]),
  ]);
  const children = new Map();
  if (spec.children && rows.rows.length) {
    const found = await pool.query(spec.children.sql, [rows.rows.map((row) => row.id)]);
    for (const child of found.rows)
      children.set(child[spec.children.key], [...(children.get(child[spec.children.key]) ?? []), child]);
  }
  const count = Number(total.rows[0].count);
  send(res, 200, {
    data: rows.rows.map((row) => spec.item(row, children.get(row.id))),
    pagination: { page, per_page: perPage, total: count, total_pages: Math.ceil(count / perPage) },
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://baseline');
  const spec = req.method === 'GET' ? LISTS[url.pathname] : undefined;
  if (!spec) return send(res, 404, { status: 404 });
  list(spec, url, res).catch((error) => send(res, 500, { status: 500, detail: error.message }));
});

server.listen(0, '127.0.0.1', () => {
  process.send({ url: `http://127.0.0.1:${server.address().port}` });
});
process.on('disconnect', () => pool.end().finally(() => process.exit(0)));
