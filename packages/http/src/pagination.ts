import { Type, type TSchema } from '@sinclair/typebox';
import type { Request, Response } from 'express';
import { validationFailed } from './errors';
import { forwardedPrefix } from './forwarded';
import { Uuid } from './schema-helpers';
import { named } from './schema-names';

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;
/**
 * The last page a caller may ask for. Without a bound, `page=99999999999999999999` made an OFFSET
 * past what PostgreSQL takes (a 500); at this one the OFFSET stays under 2^31 at any `per_page`.
 */
export const MAX_PAGE = 1_000_000;
/**
 * A whole number as the docs write it, digits grouped by commas (`1,000,000`). Not
 * `toLocaleString('en')`: at module load that brought ICU's number formatting into every service,
 * the node binary's pages and ICU's own allocations, for one string (docs/performance.md, "Memory").
 */
export function groupDigits(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** MAX_PAGE as the docs write it. */
export const MAX_PAGE_TEXT = groupDigits(MAX_PAGE);

/** `page` and `per_page`, to spread into a list endpoint's query schema. Out of range is a 400, never capped. */
export const pageQueryProperties = {
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: `Page number, 1–${MAX_PAGE_TEXT}.` }),
  per_page: Type.Integer({
    minimum: 1,
    maximum: MAX_PER_PAGE,
    default: DEFAULT_PER_PAGE,
    description: `Items per page, 1–${MAX_PER_PAGE} (default ${DEFAULT_PER_PAGE}).`,
  }),
};

/**
 * `after`, for a list that also pages by keyset: spread it into the list's query schema beside
 * pageQueryProperties when its repository takes `PageRequest.after` (keysetAfter and keysetPage of @msp/db).
 * A page after an item is found through the list's index at any depth, where `page=N` reads and
 * skips every row before it.
 */
export const keysetQueryProperties = {
  after: Type.Optional(
    Uuid({
      description:
        "Keyset paging: the id of the last item of the page before; answers the items that follow it in the list's order, " +
        'as fast deep in a large list as on its first page (`page` reads and skips every row before its page). ' +
        "The `Link` header's `next` carries the `after` of the page that follows; `pagination.page` is absent. Not with `page` above 1. " +
        'An id that is not an item of this list (deleted since, or of another list) is a 400.',
    }),
  ),
};

/**
 * What every list's OpenAPI description says of its total and its deep pages, once for
 * the three services: append it to the list's own text (it starts with a space).
 */
export const LIST_PAGES_DOC =
  ' `pagination.total` is exact (never an estimate), and a first page with its total costs the same however long the list. ' +
  "Deep pages: follow the `Link` header's `next`, which pages by keyset (`after`: the id of the last item of the page before), " +
  'as fast at any depth; `page=N` still works but reads and skips every item before its page.';

export const PaginationSchema = named(
  'Pagination',
  Type.Object(
    {
      page: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: MAX_PAGE,
          description: 'This page, starting at 1; absent on a keyset page (`after`).',
        }),
      ),
      per_page: Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE, description: 'Items per page.' }),
      total: Type.Integer({ minimum: 0, description: 'Items matching the filters, on all pages.' }),
      total_pages: Type.Integer({ minimum: 0, description: 'Pages at this `per_page`; 0 when nothing matches.' }),
      total_exact: Type.Optional(
        Type.Boolean({
          description:
            "Only on a list whose search looks at a bounded window of matches (desk's `GET /tickets?q=`): false when more items match than the window holds, " +
            "`total` then being the window's size; true when `total` counts every match.",
        }),
      ),
    },
    { additionalProperties: false, examples: [{ page: 1, per_page: DEFAULT_PER_PAGE, total: 1, total_pages: 1 }] },
  ),
);

/** A page of `item`s; its example (for the API reference) is one page holding the item's first example. */
export function pageSchema<T extends TSchema>(name: string, item: T) {
  const itemExample = (item.examples as unknown[] | undefined)?.[0];
  return named(
    name,
    Type.Object(
      { data: Type.Array(item), pagination: PaginationSchema },
      {
        additionalProperties: false,
        ...(itemExample === undefined
          ? {}
          : {
              examples: [
                { data: [itemExample], pagination: { page: 1, per_page: DEFAULT_PER_PAGE, total: 1, total_pages: 1 } },
              ],
            }),
      },
    ),
  );
}

export const LINK_HEADER = {
  Link: { description: 'RFC 8288 links to the first, prev, next and last pages.', schema: { type: 'string' } },
};

export interface PageRequest {
  page: number;
  per_page: number;
  /** Keyset paging: the id of the last item of the page before (keysetQueryProperties). */
  after?: string;
}

/** The page a list's query asks for; `after` together with a `page` above 1 is a 400 (which would win?). */
export function pageRequestOf(query: { page?: number; per_page?: number; after?: string }): PageRequest {
  const page = query.page ?? 1;
  const per_page = query.per_page ?? DEFAULT_PER_PAGE;
  if (query.after === undefined) return { page, per_page };
  if (page !== 1)
    throw validationFailed([
      { field: 'after', message: 'must not be combined with page above 1: `after` pages by keyset, `page` by number' },
    ]);
  return { page: 1, per_page, after: query.after };
}

/** The 400 of an `after` that names no item of the list. */
export function unknownAfterItem() {
  return validationFailed([
    { field: 'after', message: 'names no item of this list (deleted since, or of another list)' },
  ]);
}

/** Offset arguments for a repository. */
export function pageWindow({ page, per_page }: PageRequest) {
  return { skip: (page - 1) * per_page, take: per_page };
}

/** A page of a list as its repository reads it: `skip`/`take` (page by number) or `after` (keyset; `skip` is then 0). */
export interface ListWindow {
  skip: number;
  take: number;
  after?: string;
}

/** The repository's window of an API page request (@msp/db's keysetPage and keysetAfter read it). */
export function listWindow(page: PageRequest): ListWindow {
  return page.after === undefined ? pageWindow(page) : { skip: 0, take: page.per_page, after: page.after };
}

function pageUrl(req: Request, page: number | { after: string }): string {
  // Under an ingress path prefix (X-Forwarded-Prefix) the caller's URL has it before /api/v1.
  const url = new URL(
    `${forwardedPrefix(req)}${req.originalUrl}`,
    `${req.protocol}://${req.get('host') ?? 'localhost'}`,
  );
  if (typeof page === 'number') {
    url.searchParams.delete('after');
    url.searchParams.set('page', String(page));
  } else {
    url.searchParams.delete('page');
    url.searchParams.set('after', page.after);
  }
  return url.toString();
}

/** A keyset page: first, next (after its last item, when it is full) and last; its pagination without `page`. */
function sendKeysetPage<T>(
  req: Request,
  res: Response,
  items: T[],
  total: number,
  per_page: number,
  extra: Record<string, unknown>,
) {
  const totalPages = Math.ceil(total / per_page);
  const links = [`<${pageUrl(req, 1)}>; rel="first"`];
  const last = items[items.length - 1] as { id?: unknown } | undefined;
  if (items.length === per_page && typeof last?.id === 'string')
    links.push(`<${pageUrl(req, { after: last.id })}>; rel="next"`);
  links.push(`<${pageUrl(req, Math.max(totalPages, 1))}>; rel="last"`);
  res.setHeader('Link', links.join(', '));
  res.json({ data: items, pagination: { per_page, total, total_pages: totalPages }, ...extra });
}

/**
 * Sends `{data, pagination}` with its Link header; `extra` members (a list's totals) go beside them.
 * `totalExact` (a search over a bounded window of matches) goes into `pagination` as `total_exact`.
 */
export function sendPage<T>(
  req: Request,
  res: Response,
  items: T[],
  total: number,
  { page, per_page, after }: PageRequest,
  extra: Record<string, unknown> = {},
  totalExact?: boolean,
) {
  if (after !== undefined) return sendKeysetPage(req, res, items, total, per_page, extra);
  const totalPages = Math.ceil(total / per_page);
  const links = [`<${pageUrl(req, 1)}>; rel="first"`];
  if (page > 1) links.push(`<${pageUrl(req, Math.min(page - 1, Math.max(totalPages, 1)))}>; rel="prev"`);
  if (page < totalPages) links.push(`<${pageUrl(req, page + 1)}>; rel="next"`);
  links.push(`<${pageUrl(req, Math.max(totalPages, 1))}>; rel="last"`);
  res.setHeader('Link', links.join(', '));
  res.json({
    data: items,
    pagination: {
      page,
      per_page,
      total,
      total_pages: totalPages,
      ...(totalExact === undefined ? {} : { total_exact: totalExact }),
    },
    ...extra,
  });
}
