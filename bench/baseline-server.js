'use strict';
// The bare baseline: node:http and pg running the SQL desk runs for the same requests, with no
// framework, no authentication, no rate limit and no validation. What desk costs beyond it is
// the price of everything desk does per request.
const http = require('node:http');
const path = require('node:path');
const { Pool, types } = require('pg');

const { databaseUrl, tenantId } = JSON.parse(process.env.BENCH_BASELINE);
const DESK = path.resolve(__dirname, '../services/desk');
const { createTicketsRepository } = require(`${DESK}/dist/tickets/tickets.repository.js`);
const { SEARCH_WINDOW } = require(`${DESK}/dist/tickets/ticket.schemas.js`);
const { isoTimestamp, statementName, PLANNED_PER_CALL, SESSION_OPTIONS } = require('../packages/db/dist/index.js');
const { Kysely, PostgresDialect } = require(require.resolve('kysely', { paths: [DESK] }));
// pg's default pool size, as desk's PrismaPg adapter uses; desk's session settings (no JIT, no
// parallel workers: @msp/db createPool), so both sides run the same SQL the same way.
const pool = new Pool({ connectionString: databaseUrl, max: 10, options: SESSION_OPTIONS });

// POST /tickets's columns (its own SQL below).
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
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    ...headers,
  });
  res.end(json);
}

/*
 * The reads run exactly desk's SQL: the statements desk's own tickets repository builds
 * (services/desk/dist/tickets/tickets.repository.js), recorded once per kind of request with
 * stand-in values and no database, then sent here with the request's values, as desk sends them
 * (prepared, named as @msp/db names them; timestamps as the API's text). What is left per request
 * is node:http, pg and JSON: none of desk's framework, authentication, validation or mapping.
 */
const STAND_IN = {
  tenant: '00000000-0000-4000-8000-00000000beef',
  id: '00000000-0000-4000-8000-0000000000fe',
  status: 'STATUS',
  query: 'TSQUERY',
  perPage: 77,
  page: 3,
  minutes: 61,
};
const PLAIN_READ_TYPES = {
  getTypeParser: (oid, format) =>
    oid === 1184 && format !== 'binary' ? isoTimestamp : types.getTypeParser(oid, format),
};

/**
 * The statements `run` makes desk's repository send, in the order it sends them: the repository
 * runs on a Kysely instance whose one connection records each statement and answers it with no
 * rows (a total's statement then fails in the repository, after it was recorded).
 */
async function record(run) {
  const statements = [];
  const connection = {
    async query(text, values) {
      statements.push({ text, values });
      return { command: 'SELECT', rowCount: 0, rows: text.includes('string_agg') ? [{ query: STAND_IN.query }] : [] };
    },
    release() {},
  };
  const db = new Kysely({
    dialect: new PostgresDialect({ pool: { connect: async () => connection, end: async () => {} } }),
  });
  await run(createTicketsRepository(db, db)).catch(() => undefined);
  return statements;
}

const recorded = new Map();
/** desk's statements for this kind of request (which parameters it has), recorded on first use. */
function statementsFor(kind, run) {
  if (!recorded.has(kind)) recorded.set(kind, record(run));
  return recorded.get(kind);
}

/** A recorded statement with the stand-ins replaced by this request's values. */
function bound(statement, actual) {
  const take = actual.perPage;
  const skip = (actual.page - 1) * actual.perPage;
  const values = statement.values.map((v) => {
    if (v === STAND_IN.tenant) return tenantId;
    if (v === STAND_IN.id) return actual.id;
    if (v === STAND_IN.status) return actual.status;
    if (v === STAND_IN.query) return actual.query;
    if (v === STAND_IN.perPage) return take;
    if (v === STAND_IN.perPage * (STAND_IN.page - 1)) return skip;
    if (v === STAND_IN.minutes) return actual.minutes;
    if (Array.isArray(v)) return actual.words;
    return v;
  });
  // Named as desk's pool names them: every statement with values but a search's, planned per call.
  const name = statement.text.includes(PLANNED_PER_CALL) ? undefined : statementName(statement.text);
  return { name, text: statement.text, values, types: PLAIN_READ_TYPES };
}

/** desk's toTicket: the row as the API answers it (a search's `matched` and `key`, a list's `list_total` left out). */
function ticketOf(row) {
  const ticket = { ...row, sla: row.sla ?? null };
  delete ticket.matched;
  delete ticket.key;
  delete ticket.list_total;
  return ticket;
}

async function list(url, res) {
  const perPage = Number(url.searchParams.get('per_page') ?? 25);
  const page = Number(url.searchParams.get('page') ?? 1);
  const status = url.searchParams.get('status');
  const q = url.searchParams.get('q');
  const slaStatus = url.searchParams.get('sla_status');
  const sort = url.searchParams.get('sort');
  const actual = {
    perPage,
    page,
    status,
    minutes: Number(url.searchParams.get('at_risk_minutes') ?? 60),
    words: q?.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [],
  };
  const filters = {
    ...(status ? { status: STAND_IN.status } : {}),
    ...(slaStatus ? { sla_status: slaStatus, at_risk_minutes: STAND_IN.minutes } : {}),
    ...(sort ? { sort } : {}),
  };
  const statements = await statementsFor(`list ${status !== null} ${q !== null} ${slaStatus} ${sort}`, async (repo) => {
    // Recorded without `narrow` (the stand-in words match nothing): the search through every match, which the benchmark's words take in desk too.
    const search = q === null ? undefined : await repo.searchQuery(STAND_IN.tenant, ['stand-in']);
    await repo.list(
      STAND_IN.tenant,
      { ...filters, ...(search ? { query: search.query } : {}) },
      { page: STAND_IN.page, per_page: STAND_IN.perPage },
    );
  });
  if (q !== null) {
    const { rows: words } = await pool.query(bound(statements[0], actual));
    if (!words[0]?.query) return send(res, 400, { status: 400 });
    actual.query = words[0].query;
    // desk's searchPage: one statement, one row at least (its count of matches), the page's rows.
    // (desk's probe for `narrow` before it is left out: the baseline does that much less.)
    const { rows } = await pool.query(
      bound(
        statements.find((statement) => /WITH newest/.test(statement.text)),
        actual,
      ),
    );
    const matched = Number(rows[0]?.matched ?? 0);
    const total = Math.min(matched, SEARCH_WINDOW);
    const pagination = {
      page,
      per_page: perPage,
      total,
      total_pages: Math.ceil(total / perPage),
      total_exact: matched <= SEARCH_WINDOW,
    };
    return send(res, 200, { data: rows.filter((row) => row.id !== null).map(ticketOf), pagination });
  }
  // desk's list: the page with its total on every row; the total alone only for an empty page.
  const pageStatement = statements.find((statement) => /ORDER BY/i.test(statement.text));
  const totalStatement = statements.find((statement) => statement !== pageStatement);
  const pageRows = await pool.query(bound(pageStatement, actual));
  const total = Number(
    pageRows.rows[0]
      ? pageRows.rows[0].list_total
      : (Object.values((await pool.query(bound(totalStatement, actual))).rows[0] ?? {})[0] ?? 0),
  );
  send(res, 200, {
    data: pageRows.rows.map(ticketOf),
    pagination: { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) },
  });
}

async function get(id, res) {
  const [statement] = await statementsFor('get', (repo) => repo.findById(STAND_IN.tenant, STAND_IN.id));
  const { rows } = await pool.query(bound(statement, { id }));
  if (!rows[0]) return send(res, 404, { status: 404 });
  send(res, 200, ticketOf(rows[0]));
}

async function create(req, res) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const known = await client.query('SELECT 1 FROM clients WHERE id = $1 AND tenant_id = $2', [
      body.client_id,
      tenantId,
    ]);
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
      [
        tenantId,
        sequence.rows[0].last_number,
        body.title,
        body.description ?? '',
        body.priority ?? 'normal',
        body.category ?? 'other',
        body.client_id,
      ],
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
