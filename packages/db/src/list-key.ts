import { sql, type SelectQueryBuilder } from 'kysely';
import type { ListOrder } from './keyset';

/**
 * listPage's `afterKey` for a list of one table: the `after` item's values of the order's columns,
 * read within `scope` (the list's rows before the request's filters: its tenant, its parent), or
 * undefined when `scope` has no row whose `idColumn` is `after`. Within the scope only, so an id of
 * another tenant's list is as unknown as a missing one.
 */
export async function afterKeyOf<DB, TB extends keyof DB>(
  scope: SelectQueryBuilder<DB, TB, object>,
  order: ListOrder,
  after: string,
  idColumn = 'id',
): Promise<unknown[] | undefined> {
  const row = await scope
    .select(order.columns.map((column) => sql.ref(column).as(column)))
    .where(sql.ref(idColumn), '=', after)
    .executeTakeFirst();
  return row && order.columns.map((column) => (row as Record<string, unknown>)[column]);
}
