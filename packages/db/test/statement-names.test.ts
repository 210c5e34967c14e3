import { sql } from 'kysely';
import {
  createPool,
  openDatabase,
  plannedPerCall,
  PREPARED_PER_CONNECTION,
  sqlRows,
  statementName,
  testServerUrl,
} from '../src';

// Statements run as prepared statements named after their text (prepared-statements.ts).
const pool = createPool(testServerUrl());
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
});

describe('the Kysely instance of openDatabase', () => {
  // One connection, so that every statement below meets the same session.
  const database = openDatabase(testServerUrl(), { max: 1 });
  afterAll(() => database.close());
  const backend = async () =>
    (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, ${1}::int AS one`.execute(database.db)).rows[0]!.pid;

  test('When a statement with parameters runs again and again, then its connection prepares it once, in and out of a transaction', async () => {
    const text = 'SELECT $1::int * 3 AS n';
    const answers: number[] = [];
    for (let i = 0; i < 3; i++)
      answers.push((await sql<{ n: number }>`SELECT ${i}::int * 3 AS n`.execute(database.db)).rows[0]!.n);
    const inside = await database.db
      .transaction()
      .execute(async (trx) => (await sql<{ n: number }>`SELECT ${5}::int * 3 AS n`.execute(trx)).rows[0]!.n);
    expect([...answers, inside]).toEqual([0, 3, 6, 15]);
    const prepared = await sql<{
      name: string;
    }>`SELECT name FROM pg_prepared_statements WHERE statement = ${text}`.execute(database.db);
    expect(prepared.rows).toEqual([{ name: statementName(text) }]);
  });

  test('When a connection has prepared its most texts, then it is closed on release and the next statement runs on a fresh one', async () => {
    const before = await backend();
    for (let i = 0; i < PREPARED_PER_CONNECTION; i++) {
      const { rows } = await sql<{ n: number }>`SELECT ${i}::int + ${sql.raw(String(i))} AS n`.execute(database.db);
      expect(rows).toEqual([{ n: 2 * i }]);
    }
    const after = await backend();
    expect(after).not.toBe(before);
    const prepared = await sql<{
      count: number;
    }>`SELECT count(*)::int AS count FROM pg_prepared_statements WHERE ${1} = 1`.execute(database.db);
    expect(prepared.rows[0]!.count).toBeLessThan(PREPARED_PER_CONNECTION);
  });

  test('When a statement has no parameters, then it runs unnamed', async () => {
    await sql`SELECT 42 AS unnamed_answer`.execute(database.db);
    const prepared = await sql<{
      count: number;
    }>`SELECT count(*)::int AS count FROM pg_prepared_statements WHERE statement LIKE ${'%unnamed_answer%'}`.execute(
      database.db,
    );
    expect(prepared.rows[0]!.count).toBe(0);
  });

  test('When a statement holds a plannedPerCall condition, then it runs unnamed and answers for its values', async () => {
    const answers: boolean[] = [];
    for (const word of ['printer', 'network', 'printer'])
      answers.push(
        (
          await sql<{
            found: boolean;
          }>`SELECT ${plannedPerCall(sql<boolean>`to_tsvector('simple', 'the printer') @@ to_tsquery('simple', ${word})`)} AS found`.execute(
            database.db,
          )
        ).rows[0]!.found,
      );
    expect(answers).toEqual([true, false, true]);
    const prepared = await sql<{
      count: number;
    }>`SELECT count(*)::int AS count FROM pg_prepared_statements WHERE statement LIKE ${'%the printer%'}`.execute(
      database.db,
    );
    expect(prepared.rows[0]!.count).toBe(0);
  });
});
