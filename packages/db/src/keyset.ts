import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { AnyDatabase } from './database';

/**
 * The lists of the services page by number (`skip`/`take`) or by keyset (`after`: the id of the last
 * item of the page before). A keyset page starts its index scan at the `after` item's key, so a
 * deep page reads as little as the first.
 */
export interface ListWindow {
  skip: number;
  take: number;
  after?: string;
}

/** A list's order: these columns, all in `direction`, the last one unique (the id). */
export interface ListOrder {
  columns: readonly string[];
  direction: 'asc' | 'desc';
}

/**
 * `query` in the list's order from the `afterKey` on (the `after` item's values of the order's
 * columns; none on a page by number), with the window's LIMIT and OFFSET. `query` names the list's
 * table so that its columns are unambiguous (`tickets.created_at` when it joins).
 */
export function inListOrder<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  order: ListOrder,
  window: ListWindow,
  afterKey?: readonly unknown[],
): SelectQueryBuilder<DB, TB, O> {
  let page = query;
  if (afterKey) {
    const columns = sql.join(order.columns.map((column) => sql.ref(column)));
    const comparison = sql.raw(order.direction === 'desc' ? '<' : '>');
    page = page.where(sql<boolean>`(${columns}) ${comparison} (${sql.join(afterKey.map((value) => sql`${value}`))})`);
  }
  for (const column of order.columns) page = page.orderBy(sql.ref(column), order.direction);
  return page.limit(window.take).offset(window.skip);
}

/**
 * A page and its total. On a keyset page the `after` item's key is read first (`afterKey`, in the
 * caller's scope: its tenant, its parent); an `after` that names no item of the list is
 * `unknownAfter()` (the API's 400), never an empty page.
 */
export async function listPage<Row>(options: {
  window: ListWindow;
  afterKey: (id: string) => Promise<readonly unknown[] | undefined>;
  page: (afterKey: readonly unknown[] | undefined) => Promise<Row[]>;
  total: () => Promise<number>;
  unknownAfter: () => Error;
}): Promise<{ items: Row[]; total: number }> {
  const { window } = options;
  let key: readonly unknown[] | undefined;
  if (window.after !== undefined) {
    key = await options.afterKey(window.after);
    if (!key) throw options.unknownAfter();
  }
  const [items, total] = await Promise.all([options.page(key), options.total()]);
  return { items, total };
}

interface ListCountsTable {
  tenant_id: string;
  list: string;
  dimension: string;
  value: string;
  count: number;
}

/**
 * The exact total of `list` for a tenant, from `list_counts` (kept by triggers in every writing
 * transaction): the whole list, or the rows whose `dimension` is `value`. An index probe whatever
 * the list's length.
 */
export async function listCount(
  db: AnyDatabase,
  options: { tenantId: string; list: string; dimension?: string; value?: string },
): Promise<number> {
  const counts = db as Kysely<{ list_counts: ListCountsTable }>;
  const row = await counts
    .selectFrom('list_counts')
    .select('count')
    .where('tenant_id', '=', options.tenantId)
    .where('list', '=', options.list)
    .where('dimension', '=', options.dimension ?? 'all')
    .where('value', '=', options.dimension ? (options.value ?? '') : '')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/**
 * The total of `list` for a tenant whose date `dimension` lies between `from` and `to`
 * (YYYY-MM-DD, both inclusive, either open): the sum of that dimension's counters, one per day.
 */
export async function listCountRange(
  db: AnyDatabase,
  options: { tenantId: string; list: string; dimension: string; from?: string; to?: string },
): Promise<number> {
  const counts = db as Kysely<{ list_counts: ListCountsTable }>;
  const row = await counts
    .selectFrom('list_counts')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('count'), sql<number>`0`).as('total'))
    .where('tenant_id', '=', options.tenantId)
    .where('list', '=', options.list)
    .where('dimension', '=', options.dimension)
    // Every YYYY-MM-DD sorts between these two as text.
    .where('value', '>=', options.from ?? '0000-00-00')
    .where('value', '<=', options.to ?? '9999-99-99')
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}
