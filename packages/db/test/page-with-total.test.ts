import { Pool } from 'pg';
import { createPool, pageWithTotal, SESSION_OPTIONS, sqlRows, testServerUrl } from '../src';

// pageWithTotal puts a page and a count into one statement (renumbering the count's placeholders
// after the page's) and asks for the count alone only when the page is empty.
const pool = createPool(testServerUrl());
const rows = sqlRows({ $queryRawUnsafe: () => Promise.reject(new Error('no Prisma here')) }, pool);
afterAll(() => pool.end());

const numbers = (from: number, below: number, limit: number, offset: number) => ({
  page: {
    text: 'SELECT n FROM generate_series($1::int, $2::int) AS n ORDER BY n LIMIT $3 OFFSET $4',
    values: [from, below, limit, offset],
  },
  total: { text: 'SELECT count(*) FROM generate_series($1::int, $2::int) AS n', values: [from, below] },
});

describe('pageWithTotal', () => {
  test('When the page has rows, then they come with the total of the whole list', async () => {
    const { page, total } = numbers(1, 10, 3, 3);
    expect(await pageWithTotal<{ n: number }>(rows, page, total)).toEqual({
      items: [expect.objectContaining({ n: 4 }), expect.objectContaining({ n: 5 }), expect.objectContaining({ n: 6 })],
      total: 10,
    });
  });

  test("When the page is past the end, then it is empty and the total is still the list's", async () => {
    const { page, total } = numbers(1, 10, 3, 30);
    expect(await pageWithTotal(rows, page, total)).toEqual({ items: [], total: 10 });
  });

  test('When nothing matches, then the total is 0', async () => {
    const { page, total } = numbers(5, 4, 3, 0);
    expect(await pageWithTotal(rows, page, total)).toEqual({ items: [], total: 0 });
  });
});

describe('createPool', () => {
  test('When a statement runs on its pool, then its session has JIT and parallel workers off (each cost paid per execution, not per statement)', async () => {
    const {
      rows: [settings],
    } = await pool.query<{ jit: string; workers: string }>(
      `SELECT current_setting('jit') AS jit, current_setting('max_parallel_workers_per_gather') AS workers`,
    );
    expect(settings).toEqual({ jit: 'off', workers: '0' });
  });

  test(
    "When a pool of its own is made with the exported SESSION_OPTIONS (as the benchmarks' " +
      'baselines make theirs), then its sessions have the same settings',
    async () => {
      const own = new Pool({ connectionString: testServerUrl(), max: 1, options: SESSION_OPTIONS });
      try {
        const {
          rows: [settings],
        } = await own.query<{ jit: string; workers: string }>(
          `SELECT current_setting('jit') AS jit, current_setting('max_parallel_workers_per_gather') AS workers`,
        );
        expect(settings).toEqual({ jit: 'off', workers: '0' });
      } finally {
        await own.end();
      }
    },
  );
});
