import { randomBytes } from 'node:crypto';
import { createPool, rawSqlOver, sqlTransaction, testServerUrl } from '../src';

// sqlTransaction runs a hot write's statements in one transaction on one pooled connection.
const pool = createPool(testServerUrl());
const table = `sql_transaction_${randomBytes(4).toString('hex')}`;
const stored = async () => (await pool.query(`SELECT n FROM ${table} ORDER BY n`)).rows.map((row: { n: number }) => row.n);

beforeAll(() => pool.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`));
afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.end();
});
beforeEach(() => pool.query(`TRUNCATE ${table}`));

describe('sqlTransaction', () => {
  test('When the work succeeds, then its writes are committed together and its result comes back', async () => {
    const result = await sqlTransaction(pool, async (connection) => {
      await connection.query(`INSERT INTO ${table} VALUES (1)`);
      await rawSqlOver(connection).$executeRawUnsafe(`INSERT INTO ${table} VALUES ($1)`, 2);
      return 'done';
    });

    expect(result).toBe('done');
    expect(await stored()).toEqual([1, 2]);
  });

  test('When the work throws after writing, then nothing it wrote stays, the error goes on, and the connection returns to the pool', async () => {
    const refused = new Error('refused');

    await expect(
      sqlTransaction(pool, async (connection) => {
        await connection.query(`INSERT INTO ${table} VALUES (1)`);
        throw refused;
      }),
    ).rejects.toBe(refused);

    expect(await stored()).toEqual([]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  test('When a statement fails, then the earlier writes roll back with it', async () => {
    await expect(
      sqlTransaction(pool, async (connection) => {
        await connection.query(`INSERT INTO ${table} VALUES (1)`);
        await connection.query(`INSERT INTO ${table} VALUES (1)`); // the primary key refuses it
      }),
    ).rejects.toMatchObject({ code: '23505' });

    expect(await stored()).toEqual([]);
  });

  test('When the connection breaks mid-way, then it is closed instead of going back to the pool', async () => {
    await expect(
      sqlTransaction(pool, async (connection) => {
        await connection.query(`INSERT INTO ${table} VALUES (1)`);
        await connection.query('SELECT pg_terminate_backend(pg_backend_pid())');
      }),
    ).rejects.toThrow();

    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect(await stored()).toEqual([]);
    // The pool still serves: a new connection replaces the broken one.
    await sqlTransaction(pool, (connection) => connection.query(`INSERT INTO ${table} VALUES (3)`));
    expect(await stored()).toEqual([3]);
  });
});

describe('rawSqlOver', () => {
  test('When a query runs, then rows come back as pg parses them; an execute answers the rows it changed', async () => {
    const sql = rawSqlOver(pool);
    await sql.$executeRawUnsafe(`INSERT INTO ${table} VALUES (1), (2)`);

    expect(await sql.$executeRawUnsafe(`UPDATE ${table} SET n = n + 10 WHERE n > $1`, 0)).toBe(2);
    expect(await sql.$queryRawUnsafe(`SELECT n, count(*) OVER () AS total FROM ${table} ORDER BY n`)).toEqual([
      { n: 11, total: '2' },
      { n: 12, total: '2' },
    ]);
  });
});
