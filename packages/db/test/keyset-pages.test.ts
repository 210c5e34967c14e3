import type { Pool } from 'pg';
import {
  afterExists,
  createPool,
  keysetAfter,
  keysetOrderLimit,
  keysetPage,
  sqlRows,
  type KeysetOrder,
  type SqlQuery,
  type SqlRows,
  type SqlTag,
} from '../src';
import { emptyDatabase } from './fixture';

/*
 * The keyset pages of the services' lists, on a real table: pages by number and after an item
 * follow each other without a gap or a repeat, and an `after` that is no item of the list throws
 * the caller's error. The services pass their generated client's `Prisma` as the tag; this package
 * has no generated client, so the tests build SQL with `tag` below: sql-template-tag's behaviour
 * (fragments nest, values become `$n` placeholders), which is all the helpers use of `Prisma`.
 */
interface Fragment extends SqlQuery {
  parts: (string | { value: unknown })[];
}

function fragment(parts: (string | { value: unknown })[]): Fragment {
  const values: unknown[] = [];
  const text = parts
    .map((part) => (typeof part === 'string' ? part : (values.push(part.value), `$${values.length}`)))
    .join('');
  return { parts, text, values };
}

const tag: SqlTag<Fragment> = {
  sql(strings, ...values) {
    const parts: Fragment['parts'] = [strings[0]!];
    values.forEach((value, at) => {
      parts.push(...(isFragment(value) ? value.parts : [{ value }]), strings[at + 1]!);
    });
    return fragment(parts);
  },
  raw: (text) => fragment([text]),
  join: (values, separator = ',') =>
    fragment(values.flatMap((value, at) => (at === 0 ? value.parts : [separator, ...value.parts]))),
  empty: fragment([]),
};

function isFragment(value: unknown): value is Fragment {
  return typeof value === 'object' && value !== null && 'parts' in value;
}

class UnknownAfter extends Error {}
const unknownAfter = () => new UnknownAfter('names no item of this list');

const TENANT = '00000000-0000-4000-8000-00000000000a';
const OTHER_TENANT = '00000000-0000-4000-8000-00000000000b';
const itemId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

let database: Awaited<ReturnType<typeof emptyDatabase>>;
let pool: Pool;
let rows: SqlRows;

beforeAll(async () => {
  database = await emptyDatabase('keyset');
  pool = createPool(database.url);
  rows = sqlRows({ $queryRawUnsafe: () => Promise.reject(new Error('no Prisma here')) }, pool);
  await pool.query(
    `CREATE TABLE items (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, n int NOT NULL, code text NOT NULL, UNIQUE (tenant_id, code))`,
  );
  await pool.query(`CREATE INDEX items_list ON items (tenant_id, n, id)`);
  // Ten items of the tenant, n 1..10 with 5 twice (the id breaks the tie), codes in the reverse order; one of another tenant.
  for (let i = 1; i <= 10; i++) {
    await pool.query(`INSERT INTO items VALUES ($1, $2, $3, $4)`, [
      itemId(i),
      TENANT,
      i === 6 ? 5 : i,
      `c${String(20 - i).padStart(2, '0')}`,
    ]);
  }
  await pool.query(`INSERT INTO items VALUES ($1, $2, 1, 'x')`, [itemId(99), OTHER_TENANT]);
});

afterAll(async () => {
  await pool.end();
  await database.drop();
});

const byN = (direction: 'asc' | 'desc'): KeysetOrder<Fragment> => ({
  table: 'items',
  alias: 'i',
  columns: ['n', 'id'],
  direction,
  scope: tag.sql`k.tenant_id = ${TENANT}::uuid`,
});
const total = tag.sql`SELECT count(*) FROM items WHERE tenant_id = ${TENANT}::uuid`;

/** A page of the tenant's items by n, `n` selected as text (so the order must name the table's column). */
function page(window: { skip: number; take: number; after?: string }, list: KeysetOrder<Fragment>) {
  return keysetPage<{ id: string; n: string }>(
    rows,
    window,
    {
      page: tag.sql`SELECT i.id, i.n::text AS n FROM items i
        WHERE i.tenant_id = ${TENANT}::uuid${keysetAfter(tag, window, list)} ${keysetOrderLimit(tag, window, list)}`,
      total,
      exists: afterExists(tag, window, list),
    },
    unknownAfter,
  );
}

/** Every page after the first by keyset, each after the last item of the one before. */
async function allByKeyset(take: number, list: KeysetOrder<Fragment>): Promise<string[][]> {
  const pages = [(await page({ skip: 0, take }, list)).items.map((item) => item.id)];
  while (pages[pages.length - 1]!.length === take) {
    pages.push(
      (await page({ skip: 0, take, after: pages[pages.length - 1]![take - 1] }, list)).items.map((item) => item.id),
    );
  }
  return pages;
}

describe('keysetPage with keysetAfter', () => {
  test("When a list is read by keyset page after page, then it is the same pages as by number, and each has the whole list's total", async () => {
    for (const direction of ['asc', 'desc'] as const) {
      const byNumber = [];
      for (let skip = 0; skip < 12; skip += 4)
        byNumber.push((await page({ skip, take: 4 }, byN(direction))).items.map((item) => item.id));
      expect(await allByKeyset(4, byN(direction))).toEqual(byNumber);
      expect(await page({ skip: 0, take: 4, after: byNumber[0]![3] }, byN(direction))).toEqual({
        items: expect.any(Array),
        total: 10,
      });
    }
  });

  test("When the order names the table's column, then a column selected as text under the same name does not change the order", async () => {
    const { items } = await page({ skip: 0, take: 10 }, byN('asc'));
    expect(items.map((item) => item.n)).toEqual(['1', '2', '3', '4', '5', '5', '7', '8', '9', '10']);
    expect(items.map((item) => item.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(itemId));
  });

  test('When the page is after the last item, then it is empty and keeps the total', async () => {
    expect(await page({ skip: 0, take: 4, after: itemId(10) }, byN('asc'))).toEqual({ items: [], total: 10 });
  });

  test("When `after` names no item of the list (another tenant's, or none), then the caller's error is thrown", async () => {
    await expect(page({ skip: 0, take: 4, after: itemId(99) }, byN('desc'))).rejects.toBeInstanceOf(UnknownAfter);
    await expect(page({ skip: 0, take: 4, after: itemId(50) }, byN('desc'))).rejects.toBeInstanceOf(UnknownAfter);
  });

  test('When the list is keyed by a text column, then `after` names its item by that column', async () => {
    const byCode: KeysetOrder<Fragment> = {
      table: 'items',
      columns: ['code'],
      direction: 'asc',
      idColumn: 'code',
      idType: 'text',
      scope: tag.sql`k.tenant_id = ${TENANT}::uuid`,
    };
    const found = await keysetPage<{ code: string }>(
      rows,
      { after: 'c15' },
      {
        page: tag.sql`SELECT code FROM items
          WHERE tenant_id = ${TENANT}::uuid${keysetAfter(tag, { after: 'c15' }, byCode)}
          ${keysetOrderLimit(tag, { skip: 0, take: 3 }, byCode)}`,
        total,
        exists: afterExists(tag, { after: 'c15' }, byCode),
      },
      unknownAfter,
    );
    expect(found).toEqual({ items: [{ code: 'c16' }, { code: 'c17' }, { code: 'c18' }], total: 10 });
  });

  test('When a page is answered, then its rows are what the page selected, without the total beside them', async () => {
    const { items } = await page({ skip: 0, take: 1 }, byN('asc'));
    expect(items).toEqual([{ id: itemId(1), n: '1' }]);
  });
});
