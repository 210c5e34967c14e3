import etag from 'etag';
import type { Request } from 'express';
import { AppError } from './errors';

/*
 * ETag / If-Match / If-None-Match (RFC 9110 §13) for single resources. Express sends a strong
 * ETag with every JSON body (the app's `etag` setting is `strong`) and answers a GET whose
 * If-None-Match matches with 304. A write (PATCH, PUT, DELETE) with If-Match is checked here
 * against the resource as its GET's loader gives it, before anything changes: a tag that no longer
 * matches is 412. The comparison is strong (a weak tag never matches), `*` matches any existing
 * resource.
 */

/**
 * The strong ETag Express's res.json sends for this body with the app's `strong` setting: the
 * same serialisation, hashed by the same etag package.
 */
export function etagOf(body: unknown): string {
  return etag(JSON.stringify(body), { weak: false });
}

function ifMatchHolds(header: string, current: string): boolean {
  const tags = header.split(',').map((tag) => tag.trim());
  return tags.includes('*') || tags.includes(current);
}

/**
 * Throws 412 when the request's If-Match no longer names the resource's current state: the ETag of
 * what `load` (the loader its GET answers with) gives now. A resource that does not exist is left
 * to the write itself, which answers 404.
 */
export async function checkIfMatch(req: Request, load: () => Promise<unknown>): Promise<void> {
  const header = req.get('If-Match');
  if (header === undefined) return;
  let current: unknown;
  try {
    current = await load();
  } catch (error) {
    if (error instanceof AppError && error.status === 404) return;
    throw error;
  }
  if (current === undefined) return;
  if (!ifMatchHolds(header, etagOf(current))) {
    throw new AppError(
      412,
      'The resource has changed since the ETag given in If-Match (or the tag is weak): GET it again and retry with its current ETag. Nothing was changed.',
      {
        code: 'precondition-failed',
      },
    );
  }
}

/** RFC 9110 §13.1.2: If-None-Match compares weakly (`W/"x"` matches `"x"`); `*` matches any current representation. */
function ifNoneMatchHolds(header: string, current: string | undefined): boolean {
  if (header.trim() === '*') return true;
  if (!current) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(current));
}

/**
 * Whether a GET (or HEAD) may be answered 304, for Express's `req.fresh`, which `res.send` asks.
 * Express's own answer (the `fresh` package) ignores the validators when the request says
 * `Cache-Control: no-cache`, as a cache would; but this is the origin, which evaluates the
 * precondition whatever the request's cache directives (RFC 9110 §13.2.1). Node's fetch (undici)
 * adds `Cache-Control: no-cache` to every request carrying If-None-Match, so its callers never got
 * their 304. No route sends Last-Modified, so If-Modified-Since never applies.
 */
export function evaluateIfNoneMatch(request: Request): void {
  Object.defineProperty(request, 'fresh', {
    configurable: true,
    enumerable: true,
    get(this: Request): boolean {
      if (this.method !== 'GET' && this.method !== 'HEAD') return false;
      const status = this.res!.statusCode;
      if (!((status >= 200 && status < 300) || status === 304)) return false;
      const header = this.headers['if-none-match'];
      return header !== undefined && ifNoneMatchHolds(header, this.res!.get('ETag'));
    },
  });
}
