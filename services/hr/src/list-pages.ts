import { keysetLists, type SqlQuery } from '@msp/db';
import { unknownAfterItem } from '@msp/http';
import { Prisma } from './generated/prisma/client';

/*
 * What hr's lists share (issue 25, LISTS.md): a page by number (`skip`) or by keyset (`after`, the
 * id of the last item of the page before; @msp/http's listWindow, @msp/db's keyset helpers as
 * `lists`), and an exact total that is a counter of list_counts (packages/db) wherever the size of
 * the tenant would otherwise show.
 */

/** @msp/db's keyset helpers with hr's Prisma, and @msp/http's 400 for an `after` that names no item of the list. */
export const lists = keysetLists(Prisma, unknownAfterItem);

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
