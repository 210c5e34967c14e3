import { pageWithTotal, type SqlQuery, type SqlRows } from '@msp/db';
import { pageWindow, unknownAfterItem, type PageRequest } from '@msp/http';
import { Prisma } from './generated/prisma/client';

/*
 * What hr's lists share (issue 25, LISTS.md): a page by number (`skip`) or by keyset (`after`, the
 * id of the last item of the page before), and an exact total that is a counter of list_counts
 * (packages/db) wherever the size of the tenant would otherwise show.
 */

/** What every list's OpenAPI description says of its total and its deep pages (after the list's own text). */
export const LIST_PAGES =
  ' `pagination.total` is exact (counted in the transaction of each write, not estimated), and answering it costs the same at any size of the list. ' +
  'Deep pages: pass `after` (the id of the last item of the page before; the `Link` header\'s `next` of a keyset page carries it) to read the ' +
  'next page through the list\'s index, as fast at the end of a large list as at its start; `page=N` reads and skips every item before its page.';

/** A page of a list: `skip`/`take` (page by number) or `after` (keyset, `skip` is 0). */
export interface ListWindow {
  skip: number;
  take: number;
  after?: string;
}

/** The repository's window of an API page request. */
export function listWindow(page: PageRequest): ListWindow {
  return page.after === undefined ? pageWindow(page) : { skip: 0, take: page.per_page, after: page.after };
}

/**
 * The keyset condition of a list ordered by `(key, id) DESC`: the rows after the item `after` of
 * `table` (which must be the tenant's, and in the list's scope when `scope` is given). Served by the
 * list's index: the row comparison is its start key. An `after` that names nothing matches no row;
 * pagedList then tells the caller (400).
 */
export function keysetAfter(table: string, key: string, column: (name: string) => string, tenantId: string, after: string | undefined, scope?: Prisma.Sql): Prisma.Sql {
  if (after === undefined) return Prisma.empty;
  return Prisma.sql` AND (${Prisma.raw(column(key))}, ${Prisma.raw(column('id'))}) < (SELECT k.${Prisma.raw(key)}, k.id FROM ${Prisma.raw(table)} k
    WHERE k.id = ${after}::uuid AND k.tenant_id = ${tenantId}::uuid${scope ? Prisma.sql` AND ${scope}` : Prisma.empty})`;
}

/**
 * A page and its total in one round trip (pageWithTotal). An empty keyset page asks once more
 * whether `after` names an item of the list (`exists`): if not, it is a 400, not an empty page.
 */
export async function pagedList<T>(rows: SqlRows, window: ListWindow, page: SqlQuery, total: SqlQuery, exists: SqlQuery): Promise<{ items: T[]; total: number }> {
  const found = await pageWithTotal<T>(rows, page, total);
  if (found.items.length === 0 && window.after !== undefined && (await rows(exists)).length === 0) throw unknownAfterItem();
  return found;
}

/** `SELECT (a) - (b) - ...` of count queries: their values one after the other, placeholders renumbered. */
export function countDifference(minuend: SqlQuery, ...subtrahends: SqlQuery[]): SqlQuery {
  const values: unknown[] = [];
  const parts = [minuend, ...subtrahends].map((query) => {
    const offset = values.length;
    values.push(...query.values);
    return `(${query.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`;
  });
  return { text: `SELECT ${parts.join(' - ')} AS count`, values };
}

const DAY_MS = 86_400_000;

/**
 * The day `days` before or after `day` (`YYYY-MM-DD`), as text that orders as the days do: before
 * 0001-01-01 it is `0000-12-31`, past 9999-12-31 `9999-99-99` (after every day the API takes).
 */
export function dayShifted(day: string, days: number): string {
  const shifted = new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString();
  return /^\d{4}-/.test(shifted) ? shifted.slice(0, 10) : '9999-99-99';
}
