import { pageWithTotal, type SqlQuery, type SqlRows } from './sql-reads';

/*
 * The lists of the services (docs/api.md, "Lists"): a page by number (`skip`/`take`) or by keyset
 * (`after`, the id of the last item of the page before), and the page's total in one round trip
 * (pageWithTotal). A keyset page is a row comparison against the `after` item, which is the start
 * key of the list's index scan, so a deep page reads as little as the first.
 *
 * Each service builds its SQL with its own generated client's `Prisma.sql`; this package cannot
 * import any of them, so the fragments here are made with the tag the caller passes (its `Prisma`:
 * `sql`, `raw`, `join`, `empty`), and compose into the caller's statements as its own fragments do. The
 * tables and columns are the code's SQL, never a value.
 */

/** The parts of sql-template-tag a service's generated `Prisma` exports: pass `Prisma` itself. */
export interface SqlTag<S extends SqlQuery> {
  sql(strings: readonly string[], ...values: unknown[]): S;
  raw(text: string): S;
  join(values: readonly S[], separator?: string): S;
  empty: S;
}

/** What of a page request the SQL of a list reads: `skip`/`take`, and `after` on a keyset page (`skip` 0). @msp/http's ListWindow. */
export interface KeysetWindow {
  skip: number;
  take: number;
  after?: string;
}

/** A list's order, and where its `after` item is looked up. */
export interface KeysetOrder<S extends SqlQuery> {
  /** The list's table; the `after` item is its row `k`. */
  table: string;
  /** How the page's statement names the table, to qualify the list's columns with (a selected `date::text AS date` would otherwise be sorted). */
  alias?: string;
  /** The order: these columns, all `direction`, the last one unique (the id). */
  columns: string[];
  direction: 'asc' | 'desc';
  /** The column `after` names, `id` unless given, and its type (`uuid` unless given). */
  idColumn?: string;
  idType?: 'uuid' | 'text';
  /** SQL of `k` (the `after` item's row) that bounds it to the caller's list: its tenant, its parent. */
  scope: S;
}

function qualified(columns: string[], alias: string | undefined): string[] {
  return alias === undefined ? columns : columns.map((column) => `${alias}.${column}`);
}

/** `k`, the row `after` names, in the list's scope. */
function afterItem<S extends SqlQuery>(tag: SqlTag<S>, after: string | null, list: KeysetOrder<S>): S {
  const id = (list.idType ?? 'uuid') === 'uuid' ? tag.sql`${after}::uuid` : tag.sql`${after}`;
  return tag.sql`k.${tag.raw(list.idColumn ?? 'id')} = ${id} AND ${list.scope}`;
}

/**
 * The keyset condition, ` AND (columns) < (the after item's)` (`>` ascending), or nothing on a page
 * by number: the rows past the item `after` in the list's order. An `after` that names no item of
 * the list matches no row; keysetPage then throws.
 */
export function keysetAfter<S extends SqlQuery>(tag: SqlTag<S>, window: { after?: string }, list: KeysetOrder<S>): S {
  if (window.after === undefined) return tag.empty;
  const own = tag.raw(qualified(list.columns, list.alias).join(', '));
  const its = tag.raw(qualified(list.columns, 'k').join(', '));
  return tag.sql` AND (${own}) ${tag.raw(list.direction === 'desc' ? '<' : '>')} (SELECT ${its} FROM ${tag.raw(list.table)} k
    WHERE ${afterItem(tag, window.after, list)})`;
}

/** `ORDER BY` the list's columns, then the window's `LIMIT` and `OFFSET`. */
export function keysetOrderLimit<S extends SqlQuery>(tag: SqlTag<S>, window: KeysetWindow, list: KeysetOrder<S>): S {
  const order = qualified(list.columns, list.alias).map((column) => `${column} ${list.direction.toUpperCase()}`);
  return tag.sql`ORDER BY ${tag.raw(order.join(', '))} LIMIT ${window.take} OFFSET ${window.skip}`;
}

/** A row when `after` names an item of the list (keysetPage's `exists`). */
export function afterExists<S extends SqlQuery>(tag: SqlTag<S>, window: { after?: string }, list: KeysetOrder<S>): S {
  return tag.sql`SELECT 1 FROM ${tag.raw(list.table)} k WHERE ${afterItem(tag, window.after ?? null, list)}`;
}

/**
 * A page and its total in one round trip (pageWithTotal), the rows as the page selected them (its
 * `total` column taken off). An empty keyset page asks once more whether `after` names an item of
 * the list (`exists`, a query answering a row when it does): if not, `unknownAfter()` is thrown, not
 * an empty page answered. (@msp/http's unknownAfterItem, the 400: this package does not depend on
 * @msp/http, and @msp/http not on it.)
 */
export async function keysetPage<T extends object>(
  rows: SqlRows,
  window: { after?: string },
  queries: { page: SqlQuery; total: SqlQuery; exists: SqlQuery },
  unknownAfter: () => Error,
): Promise<{ items: T[]; total: number }> {
  const found = await pageWithTotal<T & { total?: unknown }>(rows, queries.page, queries.total);
  if (found.items.length === 0 && window.after !== undefined && (await rows(queries.exists)).length === 0)
    throw unknownAfter();
  return { items: found.items.map((row) => withoutTotal(row) as T), total: found.total };
}

/** A row of pageWithTotal as the page selected it. */
function withoutTotal<T extends { total?: unknown }>(row: T): Omit<T, 'total'> {
  const rest: Record<string, unknown> = { ...row };
  delete rest.total;
  return rest as Omit<T, 'total'>;
}
