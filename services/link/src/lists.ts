import { keysetLists } from '@msp/db';
import { unknownAfterItem } from '@msp/http';
import { Prisma } from './generated/prisma/client';

/*
 * What link's lists say of themselves (issue 25 point 1, LISTS.md). Their paging is @msp/http's
 * (listWindow) and @msp/db's (`lists` below): a page by number (`skip`) or
 * by keyset (`after`, the id of the last item of the page before), and an exact total read from
 * list_counts (packages/db; the triggers of migration 20261125153045_list_counts keep it in the
 * writing transaction), so neither the first page nor a deep one reads more of a large list than of
 * a small one.
 */

/** What a list's OpenAPI description says of its total and its deep pages. */


/** @msp/db's keyset helpers with link's Prisma, and @msp/http's 400 for an `after` that names no item of the list. */
export const lists = keysetLists(Prisma, unknownAfterItem);
