import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** The context of the request being served, if any (used by the logger). */
export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

// A caller's id is echoed only when it is short and printable, so it cannot
// smuggle header injection or megabytes into every log line.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Assigns X-Request-Id (the caller's, or a new UUID) and runs the rest of the request inside its context. */
export function requestContext(): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    const requestId = given && ACCEPTABLE_ID.test(given) ? given : randomUUID();
    req.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    storage.run({ requestId }, next);
  };
}
