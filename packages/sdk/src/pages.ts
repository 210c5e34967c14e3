import { ProblemError } from './problem';

/** Where the next page starts, from the `Link` header's `next`: a keyset `after`, or a `page` number. */
export interface PageCursor {
  after?: string;
  page?: number;
}

/** What an openapi-fetch call answers: `data` on success, `error` otherwise. */
type Answer<P, E> = { data: P; error?: never; response: Response } | { data?: never; error: E; response: Response };

/** The `next` link of an RFC 8288 `Link` header as a cursor; undefined on the last page. */
export function nextPage(response: Response): PageCursor | undefined {
  const link = response.headers.get('link');
  const next = link?.split(',').find((part) => /;\s*rel="?next"?/.test(part));
  const url = next ? /<([^>]*)>/.exec(next)?.[1] : undefined;
  if (!url) return undefined;
  const query = new URL(url, 'http://link.invalid').searchParams;
  const after = query.get('after');
  if (after) return { after };
  const page = Number(query.get('page'));
  return Number.isInteger(page) && page > 0 ? { page } : undefined;
}

/**
 * Every page of a list, following its `Link` header's `next` (by keyset where the list offers it)
 * until there is none. `fetchPage` asks for one page, spreading the cursor into its query:
 *
 *   for await (const page of pages((next) => desk.GET('/tickets', { params: { query: { per_page: 100, ...next } } })))
 *
 * A failed page throws a ProblemError.
 */
export async function* pages<P, E>(
  fetchPage: (next: PageCursor | undefined) => Promise<Answer<P, E>>,
): AsyncGenerator<NonNullable<P>, void, undefined> {
  let cursor: PageCursor | undefined;
  do {
    const { data, error, response } = await fetchPage(cursor);
    if (data == null) throw new ProblemError(response, error);
    yield data;
    cursor = nextPage(response);
  } while (cursor);
}
