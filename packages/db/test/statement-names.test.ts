import { createPool, sqlRows, statementName, testServerUrl } from '../src';

// Plain reads run as prepared statements named after their text (sql-reads.ts).
const pool = createPool(testServerUrl());
const rows = sqlRows({ $queryRawUnsafe: () => Promise.reject(new Error('no Prisma here')) }, pool);
afterAll(() => pool.end());

describe('statementName', () => {
  test('When the same text is named twice, then it gets the same name; another text gets another', () => {
    const text = 'SELECT $1::int AS n';
    expect(statementName(text)).toMatch(/^msp_[0-9a-f]{20}$/);
    expect(statementName(text)).toBe(statementName(text));
    expect(statementName('SELECT $1::int AS m')).not.toBe(statementName(text));
  });

  test('When a statement runs again and again on a connection, then it is prepared there once and each run answers its own values', async () => {
    const connection = await pool.connect();
    try {
      const onConnection = sqlRows({ $queryRawUnsafe: () => Promise.reject(new Error('no Prisma here')) }, connection);
      const answers = [];
      for (let i = 0; i < 5; i++)
        answers.push((await onConnection<{ n: number }>({ text: 'SELECT $1::int * 2 AS n', values: [i] }))[0]!.n);
      expect(answers).toEqual([0, 2, 4, 6, 8]);
      const prepared = await connection.query(
        "SELECT name FROM pg_prepared_statements WHERE statement = 'SELECT $1::int * 2 AS n'",
      );
      expect(prepared.rows).toEqual([{ name: statementName('SELECT $1::int * 2 AS n') }]);
    } finally {
      connection.release();
    }
  });

  test('When more distinct texts come than the cap, then the later ones run unnamed and still answer', async () => {
    for (let i = 0; i < 600; i++) statementName(`SELECT ${i} AS shape`);
    expect(statementName('SELECT 600 AS shape')).toBeUndefined();
    expect(statementName('SELECT $1::int * 2 AS n')).toMatch(/^msp_/); // named before the cap: kept
    expect(await rows<{ shape: number }>({ text: 'SELECT 601 AS shape', values: [] })).toEqual([{ shape: 601 }]);
  });
});
