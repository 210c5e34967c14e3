import express, { type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import { AppError, STATUS_TITLES, isAppError } from './errors';
import type { Logger } from './logger';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  request_id: string;
  instance?: string;
  errors?: { field: string; message: string }[];
  [extension: string]: unknown;
}

export function problemType(code: string | undefined): string {
  return code ? `urn:msp:problem:${code}` : 'about:blank';
}

export function toProblem(error: AppError, requestId: string, instance?: string): ProblemDocument {
  return {
    ...error.extensions,
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.message,
    request_id: requestId,
    ...(instance ? { instance } : {}),
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

/**
 * Errors raised by Express' body parsers carry a `type` and a `status`; they
 * are the caller's fault, so they become ordinary problem documents.
 */
function fromBodyParser(error: { type?: string; status?: number; limit?: number }): AppError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new AppError(400, 'The request body is not valid JSON.', { code: 'malformed-body' });
    case 'entity.too.large':
      return new AppError(413, `The request body exceeds the limit of ${error.limit} bytes.`, {
        code: 'body-too-large',
      });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError(415, 'The request body encoding or charset is not supported.', {
        code: 'unsupported-media-type',
      });
    case 'request.aborted':
      return new AppError(400, 'The request was aborted by the client.', { code: 'request-aborted' });
    default:
      if (typeof error.status === 'number' && error.status >= 400 && error.status < 500) {
        return new AppError(error.status, STATUS_TITLES[error.status] ?? 'The request cannot be processed.');
      }
      return undefined;
  }
}

export function sendProblem(res: Response, error: AppError, requestId: string) {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res
    .status(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblem(error, requestId)));
}

/**
 * A known path asked with a method it does not have: 405 with the methods it
 * does have (RFC 9110 §15.5.6), rather than a 404 that suggests a typo in the path.
 */
export function methodNotAllowed(operations: { method: string; path: string }[]): RequestHandler {
  const router = express.Router();
  const methods = new Map<string, Set<string>>();
  for (const op of operations) methods.set(op.path, (methods.get(op.path) ?? new Set()).add(op.method.toUpperCase()));
  for (const [path, allowed] of methods) {
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = [...allowed].sort().join(', ');
    router.all(path, (req, _res, next) => {
      if (req.method === 'OPTIONS') return next();
      next(
        new AppError(405, `${req.method} is not allowed on this resource; it allows ${allow}.`, {
          code: 'method-not-allowed',
          headers: { Allow: allow },
        }),
      );
    });
  }
  return router;
}

/** Unknown routes under the API answer like every other error. */
export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => {
    next(new AppError(404, `No route ${req.method} ${req.originalUrl.split('?')[0]}.`, { code: 'route-not-found' }));
  };
}

/** The single place where errors become responses. */
// PostgreSQL's SQLSTATEs of a lost or refused connection (class 08, admin/crash shutdown, starting
// up, too many connections), the socket errors of a server that went away, and Prisma's P2028 when
// an interactive transaction got no connection within its wait (every connection of the pool busy).
const OUTAGE_CODES = new Set([
  'P2028',
  '25006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  'P1001',
  'P1002',
  'P1017',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const OUTAGE_MESSAGES = new RegExp(
  [
    'Connection terminated',
    'terminating connection',
    'Server has closed the connection',
    "Can't reach database server",
    'the database system is (starting up|shutting down|in recovery mode)',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error',
  ].join('|'),
  'i',
);

/**
 * Whether an error says the database could not be reached or dropped the connection, wherever in
 * the chain the driver adapter put it (Prisma wraps pg's error; its code can sit in `cause` or in
 * `meta.driverAdapterError`).
 */
export function isDatabaseOutage(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as {
    code?: unknown;
    originalCode?: unknown;
    message?: unknown;
    cause?: unknown;
    meta?: { driverAdapterError?: unknown };
  };
  if (typeof e.code === 'string' && OUTAGE_CODES.has(e.code)) return true;
  if (typeof e.originalCode === 'string' && OUTAGE_CODES.has(e.originalCode)) return true;
  if (typeof e.message === 'string' && OUTAGE_MESSAGES.test(e.message)) return true;
  return isDatabaseOutage(e.cause, depth + 1) || isDatabaseOutage(e.meta?.driverAdapterError, depth + 1);
}

/** PostgreSQL rolled the transaction back for colliding with a concurrent one (deadlock, serialization). */
const COLLISION_CODES = new Set(['40P01', '40001']);

/** Whether an error says the transaction lost a collision with a concurrent one: nothing was changed, a retry may pass. */
export function isTransactionCollision(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    meta?: { driverAdapterError?: unknown; code?: unknown };
  };
  if (typeof e.code === 'string' && COLLISION_CODES.has(e.code)) return true;
  if (typeof e.meta?.code === 'string' && COLLISION_CODES.has(e.meta.code)) return true;
  // Prisma's raw queries name the database's code only in their message.
  if (typeof e.message === 'string' && /Code: `(40P01|40001)`/.test(e.message)) return true;
  return isTransactionCollision(e.cause, depth + 1) || isTransactionCollision(e.meta?.driverAdapterError, depth + 1);
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    // The database going away is no bug of ours nor the caller's: a 503 to retry, not a 500.
    const outage =
      !isAppError(error) && isDatabaseOutage(error)
        ? new AppError(
            503,
            'The database is not reachable at the moment, or every connection to it is busy. Retry after the time given in Retry-After.',
            {
              code: 'database-unavailable',
              headers: { 'Retry-After': '5' },
            },
          )
        : undefined;
    const collision =
      !isAppError(error) && !outage && isTransactionCollision(error)
        ? new AppError(
            503,
            'The change collided with a concurrent change to the same data and was rolled back; ' +
              'nothing was changed. Retry after the time given in Retry-After.',
            {
              code: 'concurrent-change',
              headers: { 'Retry-After': '1' },
            },
          )
        : undefined;
    const known = isAppError(error) ? error : (outage ?? collision ?? fromBodyParser(error ?? {}));
    if (known) {
      if (known.status >= 500) logger.error('request failed', { err: error, status: known.status });
      if (res.headersSent) return res.end();
      return sendProblem(res, known, req.requestId);
    }
    // A programmer error: the whole thing goes to the log, nothing of it to the caller.
    logger.error('unhandled error', {
      error: error instanceof Error ? { message: error.message, stack: error.stack, name: error.name } : error,
    });
    if (res.headersSent) return res.destroy();
    sendProblem(
      res,
      new AppError(500, `An unexpected error occurred. Please contact support and quote request id ${req.requestId}.`, {
        code: 'internal-error',
      }),
      req.requestId,
    );
  };
}
