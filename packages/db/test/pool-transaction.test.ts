import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { createPool, rawSqlOver, testServerUrl, transactionalSqlOver } from '../src';
import { withPoolTransaction } from '../src/pool-transaction';

// withPoolTransaction: BEGIN, the work, COMMIT; ROLLBACK when the work throws; a broken connection discarded.
const pool = createPool(testServerUrl());
const observer = new Pool({ connectionString: testServerUrl(), max: 1 });
const table = `pool_transaction_${randomBytes(4).toString('hex')}`;
const stored = async () =>
  (await observer.query(`SELECT n FROM ${table} ORDER BY n`)).rows.map((row) => row.n as number);

beforeAll(() => pool.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`));
beforeEach(() => pool.query(`TRUNCATE ${table}`));
afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.end();
  await observer.end();
});

describe('withPoolTransaction', () => {
  test('When the work succeeds, then its writes commit together and its result is returned', async () => {
    const result = await withPoolTransaction(pool, async (client) => {
      await client.query(`INSERT INTO ${table} VALUES (1)`);
      // Not visible outside before the commit.
      expect(await stored()).toEqual([]);
      await rawSqlOver(client).$executeRawUnsafe(`INSERT INTO ${table} VALUES ($1)`, 2);
      return 'done';
    });

    expect(result).toBe('done');
    expect(await stored()).toEqual([1, 2]);
  });

  test('When the work throws, then nothing of it is stored, the error is thrown on and the connection goes back to the pool', async () => {
    const failure = new Error('the run moved on');

    await expect(
      withPoolTransaction(pool, async (client) => {
        await client.query(`INSERT INTO ${table} VALUES (3)`);
        throw failure;
      }),
    ).rejects.toBe(failure);

    expect(await stored()).toEqual([]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
    // The connection given back is not left inside the failed transaction.
    expect((await pool.query('SELECT now() = statement_timestamp() AS outside')).rows[0].outside).toBe(true);
  });

  test("When a statement fails (a duplicate key), then the transaction rolls back and the error is PostgreSQL's", async () => {
    await pool.query(`INSERT INTO ${table} VALUES (5)`);

    await expect(
      withPoolTransaction(pool, async (client) => {
        await client.query(`INSERT INTO ${table} VALUES (4)`);
        await client.query(`INSERT INTO ${table} VALUES (5)`);
      }),
    ).rejects.toMatchObject({ code: '23505' });

    expect(await stored()).toEqual([5]);
  });

  test('When its connection is terminated mid-transaction, then the call fails, the connection is discarded and the next call works', async () => {
    await expect(
      withPoolTransaction(pool, async (client) => {
        await client.query(`INSERT INTO ${table} VALUES (6)`);
        const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
        await observer.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await client.query(`INSERT INTO ${table} VALUES (7)`);
      }),
    ).rejects.toThrow();

    expect(await stored()).toEqual([]);
    await withPoolTransaction(pool, (client) => client.query(`INSERT INTO ${table} VALUES (8)`));
    expect(await stored()).toEqual([8]);
  });
});

describe('transactionalSqlOver', () => {
  const sql = transactionalSqlOver(pool);

  test(
    "When $transaction's work succeeds, then it ran on one connection inside a " +
      'transaction (SET LOCAL holds for it alone) and its writes commit',
    async () => {
      const seen = await sql.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('SET LOCAL enable_sort = off');
        await tx.$executeRawUnsafe(`INSERT INTO ${table} VALUES ($1)`, 9);
        expect(await stored()).toEqual([]);
        return tx.$queryRawUnsafe<{ enable_sort: string }[]>('SHOW enable_sort');
      });

      expect(seen).toEqual([{ enable_sort: 'off' }]);
      expect(await stored()).toEqual([9]);
      // The setting ended with the transaction: the pool's connections have the default again.
      expect(await sql.$queryRawUnsafe('SHOW enable_sort')).toEqual([{ enable_sort: 'on' }]);
    },
  );

  test("When $transaction's work throws, then nothing of it is stored and the error is thrown on", async () => {
    await expect(
      sql.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`INSERT INTO ${table} VALUES ($1)`, 10);
        await tx.$executeRawUnsafe(`INSERT INTO ${table} VALUES ($1)`, 10);
      }),
    ).rejects.toMatchObject({ code: '23505' });

    expect(await stored()).toEqual([]);
  });
});
