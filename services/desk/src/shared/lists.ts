import { afterKeyOf, listPage, type ListOrder } from '@msp/db';
import { listWindow, unknownAfterItem, type PageRequest } from '@msp/http';
import type { SelectQueryBuilder } from 'kysely';
import type { DB } from '../db';

/**
 * A page of one of desk's lists and its total (@msp/db's listPage): by number, or after an item
 * (keyset: `page` gets the `after` item's key, read within `scope`, the list's rows before the
 * request's filters). An `after` that names no item of `scope` is @msp/http's 400, never an empty page.
 */
export function pageOfList<Row>(
  request: PageRequest,
  options: {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table of desk's
    scope: SelectQueryBuilder<DB, any, object>;
    order: ListOrder;
    page: (window: { skip: number; take: number }, afterKey: readonly unknown[] | undefined) => Promise<Row[]>;
    total: () => Promise<number>;
  },
): Promise<{ items: Row[]; total: number }> {
  const window = listWindow(request);
  return listPage({
    window,
    afterKey: (id) => afterKeyOf(options.scope, options.order, id),
    page: (afterKey) => options.page(window, afterKey),
    total: options.total,
    unknownAfter: unknownAfterItem,
  });
}
