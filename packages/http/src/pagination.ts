import { Type, type TSchema } from '@sinclair/typebox';
import type { Request, Response } from 'express';
import { forwardedPrefix } from './forwarded';
import { named } from './schema-names';

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;

/** `page` and `per_page`, to spread into a list endpoint's query schema. Out of range is a 400, never capped. */
export const pageQueryProperties = {
  page: Type.Integer({ minimum: 1, default: 1, description: 'Page number, starting at 1.' }),
  per_page: Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE, description: `Items per page, 1–${MAX_PER_PAGE} (default ${DEFAULT_PER_PAGE}).` }),
};

export const PaginationSchema = named(
  'Pagination',
  Type.Object(
    {
      page: Type.Integer({ minimum: 1, description: 'This page, starting at 1.' }),
      per_page: Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE, description: 'Items per page.' }),
      total: Type.Integer({ minimum: 0, description: 'Items matching the filters, on all pages.' }),
      total_pages: Type.Integer({ minimum: 0, description: 'Pages at this `per_page`; 0 when nothing matches.' }),
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
        ...(itemExample === undefined ? {} : { examples: [{ data: [itemExample], pagination: { page: 1, per_page: DEFAULT_PER_PAGE, total: 1, total_pages: 1 } }] }),
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
}

/** Offset arguments for a repository. */
export function pageWindow({ page, per_page }: PageRequest) {
  return { skip: (page - 1) * per_page, take: per_page };
}

function pageUrl(req: Request, page: number): string {
  // Under an ingress path prefix (X-Forwarded-Prefix) the caller's URL has it before /api/v1.
  const url = new URL(`${forwardedPrefix(req)}${req.originalUrl}`, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
  url.searchParams.set('page', String(page));
  return url.toString();
}

/** Sends `{data, pagination}` with its Link header; `extra` members (a list's totals) go beside them. */
export function sendPage<T>(req: Request, res: Response, items: T[], total: number, { page, per_page }: PageRequest, extra: Record<string, unknown> = {}) {
  const totalPages = Math.ceil(total / per_page);
  const links = [`<${pageUrl(req, 1)}>; rel="first"`];
  if (page > 1) links.push(`<${pageUrl(req, Math.min(page - 1, Math.max(totalPages, 1)))}>; rel="prev"`);
  if (page < totalPages) links.push(`<${pageUrl(req, page + 1)}>; rel="next"`);
  links.push(`<${pageUrl(req, Math.max(totalPages, 1))}>; rel="last"`);
  res.setHeader('Link', links.join(', '));
  res.json({ data: items, pagination: { page, per_page, total, total_pages: totalPages }, ...extra });
}
