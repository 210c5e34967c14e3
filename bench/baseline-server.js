'use strict';
// The bare baseline: node:http and pg running the SQL desk runs for the same requests, with no
// framework, no authentication, no rate limit and no validation. What desk costs beyond it is
// the price of everything desk does per request.
const http = require('node:http');
const { Pool } = require('pg');

const { databaseUrl, tenantId } = JSON.parse(process.env.BENCH_BASELINE);
// pg's default pool size, as desk's PrismaPg adapter uses.
const pool = new Pool({ connectionString: databaseUrl, max: 10 });

const COLUMNS = `id, number, title, description, priority, category, status, client_id, assignee_id,
  created_at, updated_at, resolved_at, closed_at`;
const toTicket = (row) => ({
  ...row,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  resolved_at: row.resolved_at?.toISOString() ?? null,
  closed_at: row.closed_at?.toISOString() ?? null,
});

function send(res, status, body, headers = {}) {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

// desk's SQL for issue 22's lists (services/desk/src/tickets/tickets.repository.ts, src/sla/ticket-slas.repository.ts).
const SEARCH_QUERY_SQL = `
  WITH words AS (
    SELECT w, i, i = max(i) OVER () AS last
    FROM unnest($1::text[]) WITH ORDINALITY AS t(w, i)
    WHERE numnode(plainto_tsquery('german', w)) > 0 AND numnode(plainto_tsquery('english', w)) > 0
  )
  SELECT string_agg('(' || (plainto_tsquery('german', w) || plainto_tsquery('english', w)
    || CASE WHEN last THEN to_tsquery('simple', w || ':*') ELSE plainto_tsquery('simple', w) END)::text || ')', ' & ' ORDER BY i) AS query
  FROM words`;
const BREACHED = {
  first_response: '(s.first_response_breached_at IS NOT NULL OR coalesce(s.first_response_completed_at, now()) > s.first_response_due_at)',
  resolution: '(s.resolution_breached_at IS NOT NULL OR coalesce(s.resolution_stopped_at, now()) > s.resolution_due_at)',
};
const RUNNING = {
  first_response: `(s.first_response_completed_at IS NULL AND NOT ${BREACHED.first_response})`,
  resolution: `(s.resolution_stopped_at IS NULL AND NOT ${BREACHED.resolution})`,
};
const AT_RISK = `EXISTS (SELECT 1 FROM ticket_slas s WHERE s.ticket_id = tickets.id AND NOT (${BREACHED.first_response} OR ${BREACHED.resolution}) AND (
      (${RUNNING.first_response} AND s.first_response_due_at <= now() + make_interval(mins => $2::int))
      OR (${RUNNING.resolution} AND s.resolution_due_at <= now() + make_interval(mins => $2::int))))`;
const SLA_NEXT_DUE = `(SELECT LEAST(
    CASE WHEN s.first_response_completed_at IS NULL THEN s.first_response_due_at END,
    CASE WHEN s.resolution_stopped_at IS NULL THEN s.resolution_due_at END)
  FROM ticket_slas s WHERE s.ticket_id = tickets.id)`;

/** `GET /tickets?q=` and `?sla_status=at_risk&sort=sla_due_at`: a page and a real count over the same WHERE. */
async function filteredList(url, res) {
  const perPage = Number(url.searchParams.get('per_page') ?? 25);
  const page = Number(url.searchParams.get('page') ?? 1);
  let where;
  let order;
  let params;
  const q = url.searchParams.get('q');
  if (q !== null) {
    const { rows } = await pool.query(SEARCH_QUERY_SQL, [q.match(/[\p{L}\p{M}\p{N}]+/gu) ?? []]);
    if (!rows[0]?.query) return send(res, 400, { status: 400 });
    params = [tenantId, rows[0].query];
    where = 'tenant_id = $1::uuid AND search_vector @@ $2::tsquery';
    order = 'ts_rank_cd(search_vector, $2::tsquery) DESC, created_at DESC, id DESC';
  } else {
    params = [tenantId, Number(url.searchParams.get('at_risk_minutes') ?? 60)];
    where = `tenant_id = $1::uuid AND ${AT_RISK}`;
    order = `${SLA_NEXT_DUE} ASC NULLS LAST, created_at DESC, id DESC`;
  }
  const [rows, total] = await Promise.all([
    pool.query(`SELECT ${COLUMNS} FROM tickets WHERE ${where} ORDER BY ${order} LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`, params),
    pool.query(`SELECT count(*) FROM tickets WHERE ${where}`, params),
  ]);
  const count = Number(total.rows[0].count);
  send(res, 200, { data: rows.rows.map(toTicket), pagination: { page, per_page: perPage, total: count, total_pages: Math.ceil(count / perPage) } });
}

async function list(url, res) {
  if (url.searchParams.has('q') || url.searchParams.get('sla_status') === 'at_risk') return filteredList(url, res);
  const status = url.searchParams.get('status');
  const perPage = Number(url.searchParams.get('per_page') ?? 25);
  const page = Number(url.searchParams.get('page') ?? 1);
  const params = status ? [tenantId, status] : [tenantId];
  const [rows, total] = await Promise.all([
    pool.query(
      `SELECT ${COLUMNS} FROM tickets WHERE tenant_id = $1 ${status ? 'AND status = $2::ticket_status' : ''}
       ORDER BY created_at DESC, id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`,
      params,
    ),
    pool.query('SELECT count FROM ticket_counts WHERE tenant_id = $1 AND dimension = $2 AND value = $3', [tenantId, status ? 'status' : 'all', status ?? '']),
  ]);
  const count = Number(total.rows[0]?.count ?? 0);
  send(res, 200, { data: rows.rows.map(toTicket), pagination: { page, per_page: perPage, total: count, total_pages: Math.ceil(count / perPage) } });
}

async function get(id, res) {
  const { rows } = await pool.query(`SELECT ${COLUMNS} FROM tickets WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
  if (!rows[0]) return send(res, 404, { status: 404 });
  send(res, 200, toTicket(rows[0]));
}

async function create(req, res) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const known = await client.query('SELECT 1 FROM clients WHERE id = $1 AND tenant_id = $2', [body.client_id, tenantId]);
    if (!known.rowCount) {
      await client.query('ROLLBACK');
      return send(res, 422, { status: 422 });
    }
    const sequence = await client.query(
      `INSERT INTO ticket_sequences (tenant_id, last_number) VALUES ($1, 1)
       ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_sequences.last_number + 1 RETURNING last_number`,
      [tenantId],
    );
    const { rows } = await client.query(
      `INSERT INTO tickets (tenant_id, number, title, description, priority, category, client_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [tenantId, sequence.rows[0].last_number, body.title, body.description ?? '', body.priority ?? 'normal', body.category ?? 'other', body.client_id],
    );
    await client.query('COMMIT');
    send(res, 201, toTicket(rows[0]), { location: `/api/v1/tickets/${rows[0].id}` });
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://baseline');
  const match = /^\/api\/v1\/tickets(?:\/([0-9a-f-]{36}))?$/.exec(url.pathname);
  let work;
  if (match && !match[1] && req.method === 'GET') work = list(url, res);
  else if (match && match[1] && req.method === 'GET') work = get(match[1], res);
  else if (match && !match[1] && req.method === 'POST') work = create(req, res);
  else return send(res, 404, { status: 404 });
  work.catch((error) => send(res, 500, { status: 500, detail: error.message }));
});

server.listen(0, '127.0.0.1', () => {
  process.send({ url: `http://127.0.0.1:${server.address().port}` });
});
process.on('disconnect', () => pool.end().finally(() => process.exit(0)));
