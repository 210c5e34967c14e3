import { randomBytes } from 'node:crypto';
import { createPool, rawSqlOver, testServerUrl } from '../src';

// rawSqlOver gives a pg pool or connection the raw-SQL surface of a Prisma client.
const pool = createPool(testServerUrl());
const table = `raw_sql_over_${randomBytes(4).toString('hex')}`;

beforeAll(() => pool.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`));
afterAll(async () => {
  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.end();
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
