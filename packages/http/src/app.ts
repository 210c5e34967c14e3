import express, { type Express, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { createApiRouter, type ApiRouter, type ResourceLock } from './api-router';
import { evaluateIfNoneMatch } from './conditional';
import { createDocsRouter } from './docs';
import { apiCors, securityHeaders } from './hardening';
import { forwardedPrefix } from './forwarded';
import {
  createIdempotency,
  memoryIdempotencyStore,
  redisIdempotencyStore,
  type EffectOfClaim,
  type IdempotencyStore,
} from './idempotency';
import { createReadiness, type Readiness, type ReadinessCheck } from './health';
import type { Logger } from './logger';
import { createHttpMetrics, type HttpMetrics } from './metrics';
import { buildOpenApiDocument, type OpenApiInfo } from './openapi';
import { errorHandler, methodNotAllowed, notFoundHandler } from './problem';
import { MAX_PAGE_TEXT } from './pagination';
import { createRateLimiter } from './rate-limit';
import { recordActor, requestContext } from './request-context';

export const API_BASE_PATH = '/api/v1';

/** What every API of the platform does alike, stated once in each OpenAPI document. */
function conventions(rateLimit: number) {
  return (
    "Tokens come from the helpdesk token endpoint; data is limited to the token's tenant, and another tenant's records answer 404. " +
    `Lists are paged (\`page\` 1–${MAX_PAGE_TEXT}, \`per_page\` 1–100, default 25) ` +
    'and answer `{data, pagination}` with an RFC 8288 `Link` header, newest first. ' +
    'Errors are RFC 9457 problem documents (`application/problem+json`) carrying `request_id`, the value of the `X-Request-Id` header. ' +
    'Instants are RFC 3339 with an offset, in the years 0001–9999 once the offset is applied; dates `YYYY-MM-DD` from 0001-01-01. ' +
    `Rate limit: ${rateLimit} requests per minute per API client (per address without a token); ` +
    'every response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`, `RateLimit` and `RateLimit-Policy`, and a 429 `Retry-After`.'
  );
}

export interface ServiceAppOptions {
  service: string;
  logger: Logger;
  openapi: OpenApiInfo;
  /** The service's own dependencies (its database); the rate limiter's Redis is checked without asking. */
  readinessChecks: Record<string, ReadinessCheck>;
  /**
   * Dependencies reported by /readyz but not gating it (the read replica): without them the service
   * still answers, from the primary or with a degraded feature, so they never take it out of the balancer.
   */
  optionalReadinessChecks?: Record<string, ReadinessCheck>;
  rateLimit: { limit: number; windowMs?: number; redis?: Redis; prefix?: string };
  /** Verifies a presented token and sets req.principal; never rejects (see requireScope). */
  authenticate: RequestHandler;
  requireScope: (scope: string) => RequestHandler;
  bodyLimit?: string;
  trustProxy?: string | boolean;
  /** Origins whose pages may call the API from a browser (API_CORS_ORIGINS); none by default. */
  corsOrigins?: string[];
  /** Routes outside the API base path and outside its rate limit (e.g. RFC 8414's well-known location). */
  rootRoutes?: (app: Express) => void;
  /** Registers the service's routes on the API router. */
  routes: (api: ApiRouter) => void;
  /**
   * The lock each write to one resource holds around its If-Match check and its change; one that
   * all instances share (@msp/db's advisoryResourceLock over the service's database), or If-Match
   * holds only within one process.
   */
  resourceLock?: ResourceLock;
  /** Where Idempotency-Key records live; by default in the rate limiter's Redis, else in the process. */
  idempotencyStore?: IdempotencyStore;
  /** What a request holding an Idempotency-Key claim committed (@msp/events effectOfClaim over the service's events). */
  effectOfIdempotencyClaim?: EffectOfClaim;
}

export interface ServiceApp {
  app: Express;
  readiness: Readiness;
  metrics: HttpMetrics;
  openapi: ReturnType<typeof buildOpenApiDocument>;
}

/**
 * What is recorded of every request once its response is sent: its metrics and its log line, in
 * one hook (one listener and one clock per request, not one per concern: each costs every request).
 */
function observeRequests(metrics: HttpMetrics, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      metrics.observe(req, res, ms / 1000);
      logger.log(res.statusCode >= 500 ? 'error' : 'info', 'request', {
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        duration_ms: Math.round(ms * 10) / 10,
        client_id: req.principal?.clientId,
        tenant_id: req.principal?.tenantId,
      });
    });
    next();
  };
}

/**
 * Draining: a busy keep-alive connection never goes idle, so server.close() would wait for the
 * shutdown timeout and then cut it. Asking the client to close after this response drains it.
 */
function drainSignal(readiness: Readiness): RequestHandler {
  return (_req, res, next) => {
    if (readiness.isShuttingDown()) res.setHeader('Connection', 'close');
    next();
  };
}

/**
 * The middleware order every service shares. Rate limiting runs before body
 * parsing and before any route, so every API response, a 401 or 404 included,
 * carries the rate-limit headers; health and metrics stay outside the API.
 */
export function createServiceApp(options: ServiceAppOptions): ServiceApp {
  const { logger } = options;
  const app = express();
  app.disable('x-powered-by');
  // Strong ETags on every JSON body, and 304 for a GET whose If-None-Match is current (conditional.ts).
  app.set('etag', 'strong');
  evaluateIfNoneMatch(app.request);
  app.set('trust proxy', options.trustProxy ?? 'loopback, linklocal, uniquelocal');

  const metrics = createHttpMetrics(options.service);
  const { redis } = options.rateLimit;
  // Redis backs only the rate limiter, which fails open: reported, but never a reason to be unready.
  const optionalChecks = { ...options.optionalReadinessChecks, ...(redis ? { redis: () => redis.ping() } : {}) };
  const readiness = createReadiness({ ...options.readinessChecks, ...optionalChecks }, logger, {
    optional: Object.keys(optionalChecks),
  });

  // What every request gets before routing, in this order: the drain signal, the hook that records
  // it, the security headers, and its context (X-Request-Id, and the AsyncLocalStorage the rest of
  // the request runs in).
  app.use(drainSignal(readiness), observeRequests(metrics, logger), securityHeaders(), requestContext());
  // With no origins listed the layer would only call next(): not mounted, one prefix trim less per request.
  if (options.corsOrigins?.length) app.use(API_BASE_PATH, apiCors(options.corsOrigins));
  options.rootRoutes?.(app);

  const base = express.Router();
  // Who is calling, before any route: the token verified, the caller recorded as the request's
  // actor, the request counted against the caller's limit.
  base.use(
    options.authenticate,
    recordActor(),
    createRateLimiter({
      limit: options.rateLimit.limit,
      windowMs: options.rateLimit.windowMs,
      redis: options.rateLimit.redis,
      prefix: options.rateLimit.prefix ?? `rl:${options.service}:`,
      name: `${options.service}-api`,
      logger,
    }),
  );
  base.get('/openapi.json', (req, res) => {
    // Behind an ingress path prefix, the API is at <prefix>/api/v1 for the reference page's "try it".
    const prefix = forwardedPrefix(req);
    res.json(prefix ? { ...document, servers: [{ url: `${prefix}${API_BASE_PATH}` }] } : document);
  });
  base.use('/docs', createDocsRouter({ title: options.openapi.title, tokenUrl: options.openapi.tokenUrl }));

  // The routes go on the base router itself, after the reference routes.
  const idempotency = createIdempotency(
    options.idempotencyStore ??
      (redis ? redisIdempotencyStore(redis, `idem:${options.service}:`, {}, logger) : memoryIdempotencyStore()),
    logger,
    { effectOfClaim: options.effectOfIdempotencyClaim },
  );
  const api = createApiRouter({
    router: base,
    requireScope: options.requireScope,
    bodyLimit: options.bodyLimit,
    idempotency,
    resourceLock: options.resourceLock,
  });
  options.routes(api);
  const document = buildOpenApiDocument(
    { ...options.openapi, description: `${options.openapi.description}\n\n${conventions(options.rateLimit.limit)}` },
    API_BASE_PATH,
    api.operations,
  );
  base.use(methodNotAllowed(api.operations));
  base.use(notFoundHandler());

  app.use(API_BASE_PATH, base);
  // After the API: an API request, the common case, need not be checked against these paths first.
  app.get('/healthz', readiness.liveness);
  app.get('/readyz', readiness.readiness);
  app.get('/metrics', metrics.handler);
  app.use(notFoundHandler());
  app.use(errorHandler(logger));
  return { app, readiness, metrics, openapi: document };
}
