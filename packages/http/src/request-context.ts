import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

/** Who made a change, as the audit log and the event stream record it. */
export interface Actor {
  /** The API client whose token made the request (`system` for the service's own jobs). */
  client_id: string;
  /**
   * The client a service client says it acted for (`X-On-Behalf-Of`): that service client's claim,
   * not verified here. Always null for any other caller.
   */
  on_behalf_of: string | null;
}

export interface RequestContext {
  requestId: string;
  /** Set once the token is verified. */
  actor?: Actor;
  /** The Idempotency-Key claim the request holds, recorded with its events (idempotency.ts). */
  idempotencyClaim?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** The context of the request being served, if any (used by the logger). */
export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

// A caller's id is echoed only when it is short and printable, so it cannot
// smuggle header injection or megabytes into every log line.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Records the verified caller as the request's actor. A service client acting for another client
 * (link running an onboarding someone started) names it in `X-On-Behalf-Of`; the audit log keeps
 * it next to the caller, who stays the accountable actor. Only a service client's token
 * (`client_kind: "service"`) may say so: from anyone else the header is ignored, or any caller could put words in the log.
 */
export function recordActor(): RequestHandler {
  return (req, _res, next) => {
    const context = storage.getStore();
    if (context && req.principal) {
      const behalf = req.principal.serviceClient ? req.get('x-on-behalf-of') : undefined;
      context.actor = {
        client_id: req.principal.clientId,
        on_behalf_of: behalf && ACCEPTABLE_ID.test(behalf) ? behalf : null,
      };
    }
    next();
  };
}

/** Runs `fn` as `actor` (a job working for whoever started it), keeping the current request id if any. */
export function runAs<T>(actor: Actor, fn: () => T): T {
  const requestId = storage.getStore()?.requestId ?? randomUUID();
  return storage.run({ requestId, actor }, fn);
}

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
