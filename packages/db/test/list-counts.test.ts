import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { listCountRangeSql, listCountSql, listCountsGroupedSql, listCountsSql } from '../src';
import { emptyDatabase, query } from './fixture';

const TENANT = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';
const DIMENSIONS = `'sheets', 'tenant_id', 'status', 'user_id', 'work_date', 'billable'`;

let db: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  db = await emptyDatabase('list_counts');
  // As a service's migrations leave it: the table, then the grouped trigger functions.
  await query(db.url, listCountsSql());
  await query(db.url, listCountsGroupedSql());
  await query(
    db.url,
    `CREATE TABLE sheets (id serial PRIMARY KEY, tenant_id uuid NOT NULL, status text NOT NULL, user_id uuid,
      work_date date NOT NULL, billable boolean NOT NULL);
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
  const key = (r: { dimension: string; value: string; count: string }) =>
    `${r.dimension}=${r.value}:${Number(r.count)}`;
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
    await query(
      db.url,
      `UPDATE sheets SET status = 'approved', billable = NOT billable WHERE work_date = '2026-10-05'`,
    );
    await query(
      db.url,
      `DELETE FROM sheets WHERE work_date = '2026-10-06' OR (user_id IS NULL AND status = 'submitted')`,
    );
    await expectCountersExact(TENANT);
    await expectCountersExact(OTHER);
    expect(await total(listCountSql(TENANT, 'sheets'))).toBe(
      Number(
        (await query<{ c: string }>(db.url, `SELECT count(*) AS c FROM sheets WHERE tenant_id = $1`, [TENANT]))[0]!.c,
      ),
    );
    expect(await total(listCountSql(TENANT, 'sheets', { dimension: 'status', value: 'nothing' }))).toBe(0);
    expect(await total(listCountSql(OTHER, 'no-such-list'))).toBe(0);
  });

  test('When a date range is asked, then the sum of the day counters equals count(*) between the dates, both inclusive, either open', async () => {
    const counted = async (where: string, values: unknown[]) =>
      Number(
        (
          await query<{ c: string }>(db.url, `SELECT count(*) AS c FROM sheets WHERE tenant_id = $1 ${where}`, [
            TENANT,
            ...values,
          ])
        )[0]!.c,
      );
    expect(
      await total(listCountRangeSql(TENANT, 'sheets', 'work_date', { from: '2026-10-03', to: '2026-10-10' })),
    ).toBe(await counted(`AND work_date BETWEEN $2 AND $3`, ['2026-10-03', '2026-10-10']));
    expect(await total(listCountRangeSql(TENANT, 'sheets', 'work_date', { from: '2026-10-20' }))).toBe(
      await counted(`AND work_date >= $2`, ['2026-10-20']),
    );
    expect(await total(listCountRangeSql(TENANT, 'sheets', 'work_date', { to: '2026-10-02' }))).toBe(
      await counted(`AND work_date <= $2`, ['2026-10-02']),
    );
    expect(await total(listCountRangeSql(TENANT, 'sheets', 'work_date', {}))).toBe(await counted('', []));
  });

  test('When the writing transaction rolls back, then the counters are as before', async () => {
    const before = await total(listCountSql(TENANT, 'sheets'));
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO sheets (tenant_id, status, work_date, billable) VALUES ($1, 'approved', '2026-10-01', true)`,
        [TENANT],
      );
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
    expect(await total(listCountSql(TENANT, 'sheets'))).toBe(before);
    await expectCountersExact(TENANT);
  });

  test('When 20 connections insert into the same tenant at once, then none deadlocks and the counters stay exact', async () => {
    const clients = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const client = new Client({ connectionString: db.url });
        await client.connect();
        return client;
      }),
    );
    try {
      await Promise.all(
        clients.map(async (client, i) => {
          await client.query('BEGIN');
          for (let n = 0; n < 5; n += 1) {
            await client.query(
              `INSERT INTO sheets (tenant_id, status, user_id, work_date, billable) VALUES ($1, $2, $3, $4, $5)`,
              [
                TENANT,
                n % 2 ? 'approved' : 'submitted',
                `00000000-0000-4000-8000-00000000000${(i + n) % 5}`,
                `2026-10-${String(10 + ((i * n) % 20)).padStart(2, '0')}`,
                i % 2 === 0,
              ],
            );
          }
          await client.query('COMMIT');
        }),
      );
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
    await expectCountersExact(TENANT);
  });

  test("When an UPDATE changes no counted value, then no counter row is written; when it changes one, only that dimension's counters are", async () => {
    await query(db.url, `ALTER TABLE sheets ADD COLUMN IF NOT EXISTS note text`);
    const versions = async () =>
      new Map(
        (
          await query<{ k: string; v: string }>(
            db.url,
            `SELECT dimension || '=' || value AS k, xmin::text || ctid::text AS v FROM list_counts WHERE tenant_id = $1 AND list = 'sheets'`,
            [TENANT],
          )
        ).map((r) => [r.k, r.v]),
      );
    const before = await versions();
    // Other columns only; then counted columns set to what they hold.
    await query(db.url, `UPDATE sheets SET note = 'seen' WHERE tenant_id = $1`, [TENANT]);
    await query(
      db.url,
      `UPDATE sheets SET status = status, work_date = work_date, user_id = user_id WHERE tenant_id = $1`,
      [TENANT],
    );
    expect(await versions()).toEqual(before);

    // submitted → approved on one day: the two status counters change, no other counter is written.
    const moved = await query(
      db.url,
      `UPDATE sheets SET status = 'approved' WHERE tenant_id = $1 AND work_date = '2026-10-07' AND status = 'submitted' RETURNING id`,
      [TENANT],
    );
    expect(moved.length).toBeGreaterThan(0);
    const after = await versions();
    const written = [...after.keys()].filter((k) => after.get(k) !== before.get(k)).sort();
    expect(written).toEqual(['status=approved', 'status=submitted']);
    await expectCountersExact(TENANT);
  });

  test(
    'When a dimension is NULL, then the row counts in the whole list and in no ' +
      'counter of that dimension, and moves in and out of it on update',
    async () => {
      const nullUserCounters = async () =>
        Number(
          (
            await query<{ c: string }>(
              db.url,
              `SELECT count(*) AS c FROM list_counts WHERE list = 'sheets' AND dimension = 'user_id' AND value IS NULL`,
            )
          )[0]!.c,
        );
      await query(
        db.url,
        `INSERT INTO sheets (tenant_id, status, user_id, work_date, billable) SELECT $1, 'submitted', NULL, '2026-10-28', false FROM generate_series(1, 50)`,
        [OTHER],
      );
      await expectCountersExact(OTHER);
      await query(
        db.url,
        `UPDATE sheets SET user_id = '00000000-0000-4000-8000-0000000000aa' WHERE tenant_id = $1 AND user_id IS NULL AND work_date = '2026-10-28'`,
        [OTHER],
      );
      await expectCountersExact(OTHER);
      await query(
        db.url,
        `UPDATE sheets SET user_id = NULL WHERE tenant_id = $1 AND user_id = '00000000-0000-4000-8000-0000000000aa'`,
        [OTHER],
      );
      await expectCountersExact(OTHER);
      expect(
        await total(
          listCountSql(OTHER, 'sheets', { dimension: 'user_id', value: '00000000-0000-4000-8000-0000000000aa' }),
        ),
      ).toBe(0);
      expect(await nullUserCounters()).toBe(0);
    },
  );

  test(
    'When dimensions are of each type the services count by, then every value is the text ' +
      "to_jsonb(row)->>column gives, whatever the session's DateStyle",
    async () => {
      // uuid, text, varchar, boolean, an enum, an integer, a date, a timestamp(3) (the audit log's
      // occurred_hour), a timestamptz: the counters against the first version's values, to_jsonb(row)->>column.
      const columns = ['owner', 'label', 'code', 'flag', 'kind', 'level', 'day', 'hour', 'at'];
      const args = `'typed', 'tenant_id', ${columns.map((c) => `'${c}'`).join(', ')}`;
      await query(
        db.url,
        `CREATE TYPE typed_kind AS ENUM ('Alpha', 'beta gamma');
       CREATE TABLE typed (id serial PRIMARY KEY, tenant_id uuid NOT NULL, owner uuid, label text, code varchar(8), flag boolean,
                           kind typed_kind, level int, day date, hour timestamp(3), at timestamptz(3), other text);
       CREATE TRIGGER typed_counts_insert AFTER INSERT ON typed REFERENCING NEW TABLE AS new_rows
         FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert(${args});
       CREATE TRIGGER typed_counts_update AFTER UPDATE ON typed REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
         FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update(${args});
       CREATE TRIGGER typed_counts_delete AFTER DELETE ON typed REFERENCING OLD TABLE AS old_rows
         FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete(${args});`,
      );
      type Counter = { dimension: string; value: string; count: string };
      const client = new Client({ connectionString: db.url });
      await client.connect();
      let counters: Counter[];
      let expected: Counter[];
      try {
        // Not the ISO style: a date's or timestamp's ::text would read 07/10/2026 here. (A timestamptz
        // is written in the session's time zone by to_jsonb too: the same as before, not one text.)
        await client.query(`SET DateStyle = 'SQL, DMY'; SET TimeZone = 'Europe/Berlin'`);
        await client.query(
          `INSERT INTO typed (tenant_id, owner, label, code, flag, kind, level, day, hour, at)
         SELECT $1, CASE WHEN n % 4 = 0 THEN NULL ELSE ('A0000000-0000-4000-8000-' || lpad((n % 3)::text, 12, '0'))::uuid END,
                CASE WHEN n % 5 = 0 THEN NULL ELSE 'Label ' || (n % 2) END, 'C-' || (n % 3), n % 3 = 0,
                (ARRAY['Alpha', 'beta gamma'])[1 + n % 2]::typed_kind, n % 4 - 2, date '2026-10-01' + n % 3,
                timestamp '2026-10-01 09:00:00' + (n % 3) * interval '1 hour' + (n % 2) * interval '0.12 second',
                timestamptz '2026-10-01 09:00:00.5+00' + (n % 2) * interval '1 day'
           FROM generate_series(1, 300) AS n`,
          [TENANT],
        );
        await client.query(`UPDATE typed SET day = day + 1, kind = 'Alpha', hour = NULL, other = 'x' WHERE id % 7 = 0`);
        await client.query(`DELETE FROM typed WHERE id % 11 = 0`);
        counters = (
          await client.query<Counter>(
            `SELECT dimension, value, count FROM list_counts WHERE tenant_id = $1 AND list = 'typed' AND count <> 0`,
            [TENANT],
          )
        ).rows;
        expected = (
          await client.query<Counter>(
            `SELECT 'all' AS dimension, '' AS value, count(*) FROM typed WHERE tenant_id = $1
         UNION ALL
         SELECT d, to_jsonb(t)->>d, count(*) FROM typed t CROSS JOIN unnest($2::text[]) AS d
          WHERE tenant_id = $1 AND to_jsonb(t)->>d IS NOT NULL GROUP BY 1, 2`,
            [TENANT, columns],
          )
        ).rows;
      } finally {
        await client.end();
      }
      const key = (r: Counter) => `${r.dimension}=${r.value}:${Number(r.count)}`;
      expect(counters.map(key).sort()).toEqual(expected.map(key).sort());
      // The ISO forms, as readers ask for them.
      const values = new Set(counters.map((r) => `${r.dimension}=${r.value}`));
      for (const value of [
        'day=2026-10-02',
        'hour=2026-10-01T10:00:00',
        'hour=2026-10-01T10:00:00.12',
        'flag=true',
        'kind=beta gamma',
        'level=-2',
        'owner=a0000000-0000-4000-8000-000000000001',
      ]) {
        expect(values).toContain(value);
      }
    },
  );

  test('When a list has no dimension, then its counter is the whole list (inserts, updates of the tenant, deletes)', async () => {
    await query(
      db.url,
      `CREATE TABLE plain (id serial PRIMARY KEY, tenant_id uuid NOT NULL, name text);
       CREATE TRIGGER plain_counts_insert AFTER INSERT ON plain REFERENCING NEW TABLE AS new_rows
         FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('plain', 'tenant_id');
       CREATE TRIGGER plain_counts_update AFTER UPDATE ON plain REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
         FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('plain', 'tenant_id');
       CREATE TRIGGER plain_counts_delete AFTER DELETE ON plain REFERENCING OLD TABLE AS old_rows
         FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('plain', 'tenant_id');`,
    );
    await query(db.url, `INSERT INTO plain (tenant_id, name) SELECT $1, 'n' || n FROM generate_series(1, 40) AS n`, [
      TENANT,
    ]);
    await query(db.url, `UPDATE plain SET tenant_id = $1 WHERE id <= 15`, [OTHER]);
    await query(db.url, `UPDATE plain SET name = 'renamed'`);
    await query(db.url, `DELETE FROM plain WHERE id % 4 = 0`);
    const rows = await query<{ tenant_id: string; count: string }>(
      db.url,
      `SELECT tenant_id, count(*) FROM plain GROUP BY 1`,
    );
    for (const row of rows) expect(await total(listCountSql(row.tenant_id, 'plain'))).toBe(Number(row.count));
    expect(
      await query(db.url, `SELECT dimension FROM list_counts WHERE list = 'plain' AND dimension <> 'all'`),
    ).toEqual([]);
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
        if (sql.includes('CREATE TABLE "list_counts"'))
          expect({ service, folder, holdsCanonical: sql.includes(canonical) }).toEqual({
            service,
            folder,
            holdsCanonical: true,
          });
      }
    }
  });

  test(
    "When a service's migrations keep list counters, then a later migration replaces their " +
      'functions with packages/db/sql/list-counts-grouped.sql word for word',
    () => {
      const services = path.join(__dirname, '..', '..', '..', 'services');
      const grouped = listCountsGroupedSql();
      for (const service of readdirSync(services)) {
        const migrations = path.join(services, service, 'prisma', 'migrations');
        let folders: string[];
        try {
          folders = readdirSync(migrations).sort();
        } catch {
          continue;
        }
        const read = (folder: string) => {
          try {
            return readFileSync(path.join(migrations, folder, 'migration.sql'), 'utf8');
          } catch {
            return '';
          }
        };
        const creating = folders.find((folder) => read(folder).includes('CREATE TABLE "list_counts"'));
        if (!creating) continue;
        // Applied in folder order: after the table and the first functions, with the text as it is.
        const folder = '20261125190000_list_counts_grouped';
        expect({ service, after: folder > creating, holdsGrouped: read(folder) === grouped }).toEqual({
          service,
          after: true,
          holdsGrouped: true,
        });
      }
    },
  );
});
