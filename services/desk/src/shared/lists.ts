import { keysetLists } from '@msp/db';
import { unknownAfterItem } from '@msp/http';
import { Prisma } from '../generated/prisma/client';

/**
 * desk's lists page through @msp/db's keyset helpers (keysetListPage: a page by number or after an
 * item, and the total, in one round trip), with desk's Prisma and @msp/http's 400 for an `after`
 * that names no item of the list.
 */
export const lists = keysetLists(Prisma, unknownAfterItem);
