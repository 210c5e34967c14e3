import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { listCountRangeSql, listCountSql, listCountsSql } from '../src';
import { emptyDatabase, query } from './fixture';

const TENANT = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';
const DIMENSIONS = `'sheets', 'tenant_id', 'status', 'user_id', 'work_date', 'billable'`;

let db: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  db = await emptyDatabase('list_counts');
  await query(db.url, listCountsSql());
  await query(
    db.url,
    `CREATE TABLE sheets (id serial PRIMARY KEY, tenant_id uuid NOT NULL, status text NOT NULL, user_id uuid, work_date date NOT NULL, billable boolean NOT NULL);
     CREATE TRIGGER sheets_counts_insert AFTER INSERT ON sheets REFERENCING NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert(${DIMENSIONS});
     CREATE TRIGGER sheets_counts_update AFTER UPDATE ON sheets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update(${DIMENSIONS});
     CREATE TRIGGER sheets_counts_delete AFTER DELETE ON sheets REFERENCING OLD TABLE AS old_rows
       FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete(${DIMENSIONS});`,
  );
});
afterAll(() => db.drop());

async function total(sql: { text: string; values: unknown[] }): Promise<number> {
  const [row] = await query<{ count: string }>(db.url, sql.text, sql.values);
  return Number(row!.count);
}

/** Every counter of the tenant against count(*) of the rows it stands for. */
async function expectCountersExact(tenantId: string) {
  const counters = await query<{ dimension: string; value: string; count: string }>(
    db.url,
    `SELECT dimension, value, count FROM list_counts WHERE tenant_id = $1 AND list = 'sheets' AND count <> 0`,
    [tenantId],
  );
  const actual = await query<{ dimension: string; value: string; count: string }>(
    db.url,
    `SELECT 'all' AS dimension, '' AS value, count(*) FROM sheets WHERE tenant_id = $1 HAVING count(*) > 0
     UNION ALL SELECT 'status', status, count(*) FROM sheets WHERE tenant_id = $1 GROUP BY status
     UNION ALL SELECT 'user_id', user_id::text, count(*) FROM sheets WHERE tenant_id = $1 AND user_id IS NOT NULL GROUP BY user_id
     UNION ALL SELECT 'work_date', work_date::text, count(*) FROM sheets WHERE tenant_id = $1 GROUP BY work_date
     UNION ALL SELECT 'billable', billable::text, count(*) FROM sheets WHERE tenant_id = $1 GROUP BY billable`,
    [tenantId],
  );
  const key = (r: { dimension: string; value: string; count: string }) => `${r.dimension}=${r.value}:${Number(r.count)}`;
  expect(counters.map(key).sort()).toEqual(actual.map(key).sort());
}

describe('list_counts', () => {
  test('When rows are inserted, updated and deleted in statements of many rows, then every counter equals count(*) of its rows', async () => {
    await query(
      db.url,
      `INSERT INTO sheets (tenant_id, status, user_id, work_date, billable)
       SELECT CASE WHEN n % 10 = 0 THEN $2::uuid ELSE $1::uuid END, CASE WHEN n % 3 = 0 THEN 'approved' ELSE 'submitted' END,
              CASE WHEN n % 7 = 0 THEN NULL ELSE ('00000000-0000-4000-8000-' || lpad((n % 5)::text, 12, '0'))::uuid END,
              date '2026-10-01' + (n % 31), n % 2 = 0
         FROM generate_series(1, 5000) AS n`,
      [TENANT, OTHER],
    );
    await query(db.url, `UPDATE sheets SET status = 'approved', billable = NOT billable WHERE work_date = '2026-10-05'`);
    await query(db.url, `DELETE FROM sheets WHERE work_date = '2026-10-06' OR (user_id IS NULL AND status = 'submitted')`);
    await expectCountersExact(TENANT);
    await expectCountersExact(OTHER);
    expect(await total(listCountSql(TENANT, 'sheets'))).toBe(Number((await query<{ c: string }>(db.url, `SELECT count(*) AS c FROM sheets WHERE tenant_id = $1`, [TENANT]))[0]!.c));
    expect(await total(listCountSql(TENANT, 'sheets', { dimension: 'status', value: 'nothing' }))).toBe(0);
    expect(await total(listCountSql(OTHER, 'no-such-list'))).toBe(0);
  });

  test('When a date range is asked, then the sum of the day counters equals count(*) between the dates, both inclusive, either open', async () => {
    const counted = async (where: string, values: unknown[]) =>
      Number((await query<{ c: string }>(db.url, `SELECT count(*) AS c FROM sheets WHERE tenant_id = $1 ${where}`, [TENANT, ...values]))[0]!.c);
    expect(await total(listCountRangeSql(TENANT, 'sheets', 'work_date', { from: '2026-10-03', to: '2026-10-10' }))).toBe(
      await counted(`AND work_date BETWEEN $2 AND $3`, ['2026-10-03', '2026-10-10']),
    );
    expect(await total(listCountRangeSql(TENANT, 'sheets', 'work_date', { from: '2026-10-20' }))).toBe(await counted(`AND work_date >= $2`, ['2026-10-20']));
    expect(await total(listCountRangeSql(TENANT, 'sheets', 'work_date', { to: '2026-10-02' }))).toBe(await counted(`AND work_date <= $2`, ['2026-10-02']));
    expect(await total(listCountRangeSql(TENANT, 'sheets', 'work_date', {}))).toBe(await counted('', []));
  });

  test('When the writing transaction rolls back, then the counters are as before', async () => {
    const before = await total(listCountSql(TENANT, 'sheets'));
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO sheets (tenant_id, status, work_date, billable) VALUES ($1, 'approved', '2026-10-01', true)`, [TENANT]);
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
    expect(await total(listCountSql(TENANT, 'sheets'))).toBe(before);
    await expectCountersExact(TENANT);
  });

  test('When 20 connections insert into the same tenant at once, then none deadlocks and the counters stay exact', async () => {
    const clients = await Promise.all(Array.from({ length: 20 }, async () => {
      const client = new Client({ connectionString: db.url });
      await client.connect();
      return client;
    }));
    try {
      await Promise.all(clients.map(async (client, i) => {
        await client.query('BEGIN');
        for (let n = 0; n < 5; n += 1) {
          await client.query(`INSERT INTO sheets (tenant_id, status, user_id, work_date, billable) VALUES ($1, $2, $3, $4, $5)`, [
            TENANT, n % 2 ? 'approved' : 'submitted', `00000000-0000-4000-8000-00000000000${(i + n) % 5}`, `2026-10-${String(10 + ((i * n) % 20)).padStart(2, '0')}`, i % 2 === 0,
          ]);
        }
        await client.query('COMMIT');
      }));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
    await expectCountersExact(TENANT);
  });

  test("When a service's migrations keep list counters, then they hold packages/db/sql/list-counts.sql word for word", () => {
    const services = path.join(__dirname, '..', '..', '..', 'services');
    const canonical = listCountsSql();
    for (const service of readdirSync(services)) {
      const migrations = path.join(services, service, 'prisma', 'migrations');
      let folders: string[];
      try {
        folders = readdirSync(migrations);
      } catch {
        continue;
      }
      for (const folder of folders) {
        let sql: string;
        try {
          sql = readFileSync(path.join(migrations, folder, 'migration.sql'), 'utf8');
        } catch {
          continue;
        }
        if (sql.includes('CREATE TABLE "list_counts"')) expect({ service, folder, holdsCanonical: sql.includes(canonical) }).toEqual({ service, folder, holdsCanonical: true });
      }
    }
  });
});
