import etag from 'etag';
import type { Request, Response } from 'express';
import { AppError } from './errors';

/*
 * ETag / If-Match / If-None-Match (RFC 9110 §13) for single resources. Express sends a strong
 * ETag with every JSON body (the app's `etag` setting is `strong`) and answers a GET whose
 * If-None-Match matches with 304. A write (PATCH, PUT, DELETE) with If-Match is checked here
 * against the resource as its GET would show it, before anything changes: a tag that no longer
 * matches is 412. The comparison is strong (a weak tag never matches), `*` matches any existing
 * resource.
 */

/** The strong ETag Express sends for this JSON body (same serialisation, same hash). */
export function etagOf(body: unknown): string {
  return etag(Buffer.from(JSON.stringify(body), 'utf8'), { weak: false });
}

function ifMatchHolds(header: string, current: string): boolean {
  const tags = header.split(',').map((tag) => tag.trim());
  return tags.includes('*') || tags.includes(current);
}

/**
 * What the GET handler of the same path answers now, without sending anything: `undefined` when it
 * finds nothing (the write itself then answers 404).
 */
async function representation(read: (req: Request, res: Response) => unknown, req: Request): Promise<unknown> {
  let body: unknown;
  const shim = {
    statusCode: 200,
    status() {
      return shim;
    },
    set() {
      return shim;
    },
    setHeader() {
      return shim;
    },
    location() {
      return shim;
    },
    type() {
      return shim;
    },
    json(value: unknown) {
      body = value;
      return shim;
    },
    send(value: unknown) {
      body = value;
      return shim;
    },
  };
  try {
    await read(req, shim as unknown as Response);
  } catch (error) {
    if (error instanceof AppError && error.status === 404) return undefined;
    throw error;
  }
  return body;
}

/** Throws 412 when the request's If-Match no longer names the resource's current state. */
export async function checkIfMatch(req: Request, read: (req: Request, res: Response) => unknown): Promise<void> {
  const header = req.get('If-Match');
  if (header === undefined) return;
  const current = await representation(read, req);
  if (current === undefined) return;
  if (!ifMatchHolds(header, etagOf(current))) {
    throw new AppError(412, 'The resource has changed since the ETag given in If-Match (or the tag is weak): GET it again and retry with its current ETag. Nothing was changed.', {
      code: 'precondition-failed',
    });
  }
}
