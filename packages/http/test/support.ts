import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import {
  AppError,
  createLogger,
  createServiceApp,
  currentContext,
  strictObject,
  type IdempotencyStore,
  type Principal,
  type ServiceAppOptions,
} from '../src';

/**
 * The kit on its own, with a stand-in for @msp/auth (which depends on this
 * package): "Bearer <client>:<scope>" names the caller. Token verification
 * itself is tested in @msp/auth and in each service.
 */
export const fakeAuthenticate: RequestHandler = (req, _res, next) => {
  const match = /^Bearer (\w+):([\w:]+)$/.exec(req.get('authorization') ?? '');
  if (match) {
    req.principal = {
      clientId: match[1]!,
      tenantId: 't1',
      scopes: [match[2]!],
      tokenId: 'x',
      expiresAt: 0,
      serviceClient: false,
    } satisfies Principal;
  }
  next();
};

export const fakeRequireScope =
  (scope: string): RequestHandler =>
  (req, _res, next) => {
    if (!req.principal) throw new AppError(401, 'An access token is required.', { code: 'invalid-token' });
    if (!req.principal.scopes.includes(scope))
      throw new AppError(403, 'Missing scope.', { code: 'insufficient-scope' });
    next();
  };

/**
 * A service app with nothing but `routes`: logs discarded (errors only), the stand-in caller
 * (fakeAuthenticate), a limit of 600 a minute in memory. `options` overrides any of it.
 */
export function bareServiceApp(
  service: string,
  routes: ServiceAppOptions['routes'],
  options: Partial<ServiceAppOptions> = {},
) {
  return createServiceApp({
    service,
    logger: createLogger({ service, level: 'error', stream: new PassThrough() }),
    openapi: { title: service, version: '1', description: 'test', tokenUrl: 'http://localhost/token', scopes: {} },
    readinessChecks: {},
    rateLimit: { limit: 600 },
    authenticate: fakeAuthenticate,
    requireScope: fakeRequireScope,
    routes,
    ...options,
  });
}

/** A logger whose lines are collected, parsed, as written (one JSON document per line). */
export function capturedLogger(service: string, level: 'debug' | 'info') {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { logger: createLogger({ service, level, stream }), lines };
}

export function kitApp(
  options: {
    redis?: Redis;
    limit?: number;
    prefix?: string;
    bodyLimit?: string;
    slowMs?: number;
    corsOrigins?: string[];
    createDelayMs?: number;
    idempotencyStore?: IdempotencyStore;
    /**
     * The create commits (its effect is recorded under the request's claim, as a service's events
     * are) and then loses its database connection on the way back, as when PostgreSQL went away
     * between its COMMIT and the answer.
     */
    failAfterCommit?: boolean;
    /** How many times the lookup of what a claim committed finds the database away before it works. */
    effectLookupFailures?: number;
  } = {},
) {
  let created = 0;
  const effects = new Map<string, { resourceId: string; object: unknown }>();
  let lookupFailures = options.effectLookupFailures ?? 0;
  const things = new Map<string, { id: string; name: string; version: number }>([
    ['1', { id: '1', name: 'first', version: 1 }],
  ]);
  /** The thing as its GET shows it, or a 404: the loader its GET and the If-Match of its writes share. */
  const loadThing = async (id: string) => {
    const thing = things.get(id);
    if (!thing) throw new AppError(404, `No thing ${id}.`, { code: 'not-found' });
    return thing;
  };
  const { logger, lines } = capturedLogger('kit', 'debug');
  const service = createServiceApp({
    service: 'kit',
    logger,
    openapi: {
      title: 'Kit',
      version: '1',
      description: 'test',
      tokenUrl: 'http://localhost/token',
      scopes: { 'read:things': 'read' },
    },
    readinessChecks: {},
    rateLimit: { limit: options.limit ?? 600, redis: options.redis, prefix: options.prefix },
    authenticate: fakeAuthenticate,
    requireScope: fakeRequireScope,
    bodyLimit: options.bodyLimit,
    corsOrigins: options.corsOrigins,
    idempotencyStore: options.idempotencyStore,
    effectOfIdempotencyClaim: async (claim) => {
      if (lookupFailures > 0) {
        lookupFailures -= 1;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      }
      return effects.get(claim);
    },
    routes: (api) => {
      api.route({
        method: 'post',
        path: '/things',
        operationId: 'createThing',
        summary: 'Create a thing',
        tags: ['Things'],
        scope: 'read:things',
        body: strictObject({
          name: Type.String({ minLength: 1 }),
          size: Type.Optional(Type.Integer({ minimum: 1 })),
          parts: Type.Optional(Type.Array(strictObject({ start: Type.String({ format: 'hh-mm' }) }))),
        }),
        responses: { 201: { description: 'Created' } },
        handler: async (_req, res, { body }) => {
          if (options.createDelayMs) await new Promise((resolve) => setTimeout(resolve, options.createDelayMs).unref());
          created += 1;
          if (options.failAfterCommit) {
            const claim = currentContext()?.idempotencyClaim;
            if (claim) effects.set(claim, { resourceId: String(created), object: { ...body, number: created } });
            throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
          }
          res
            .status(201)
            .location(`/api/v1/things/${created}`)
            .json({ ...body, number: created });
        },
      });
      api.route({
        method: 'get',
        path: '/things',
        operationId: 'listThings',
        summary: 'List',
        tags: ['Things'],
        scope: 'read:things',
        query: Type.Object({ page: Type.Integer({ minimum: 1, default: 1 }) }),
        responses: { 200: { description: 'OK' } },
        handler: (req, res, { query }) => {
          res.json({ page: query.page, authorization_seen: Boolean(req.get('authorization')) });
        },
      });
      api.route({
        method: 'get',
        path: '/things/:id',
        operationId: 'getThing',
        summary: 'Read a thing',
        tags: ['Things'],
        scope: 'read:things',
        params: Type.Object({ id: Type.String({ pattern: '^[0-9]+$' }) }),
        responses: { 200: { description: 'The thing.' } },
        load: (_req, { params }) => loadThing(params.id),
        // A handler of its own that uses more of Express's response than res.json.
        handler: async (_req, res, { params }) => {
          res
            .vary('Accept-Language')
            .set('Content-Language', 'en')
            .status(200)
            .json(await loadThing(params.id));
        },
      });
      api.route({
        method: 'patch',
        path: '/things/:id',
        operationId: 'updateThing',
        summary: 'Change a thing',
        tags: ['Things'],
        scope: 'read:things',
        params: Type.Object({ id: Type.String({ pattern: '^[0-9]+$' }) }),
        body: strictObject({ name: Type.String({ minLength: 1 }) }),
        responses: { 200: { description: 'The thing after the change.' } },
        handler: async (_req, res, { params, body }) => {
          const thing = things.get(params.id);
          if (!thing) throw new AppError(404, `No thing ${params.id}.`, { code: 'not-found' });
          if (options.createDelayMs) await new Promise((resolve) => setTimeout(resolve, options.createDelayMs).unref());
          const changed = { ...thing, ...body, version: thing.version + 1 };
          things.set(params.id, changed);
          res.json(changed);
        },
      });
      api.route({
        method: 'post',
        path: '/things/:id/bump',
        operationId: 'bumpThing',
        summary: 'An action on a thing, answering 200',
        tags: ['Things'],
        scope: 'read:things',
        params: Type.Object({ id: Type.String() }),
        idempotent: true,
        responses: { 200: { description: 'The thing after the action.' } },
        handler: async (_req, res, { params }) => {
          const thing = await loadThing(params.id);
          const changed = { ...thing, version: thing.version + 1 };
          things.set(params.id, changed);
          res.json(changed);
        },
      });
      api.route({
        method: 'get',
        path: '/boom',
        operationId: 'boom',
        summary: 'Fails like a bug',
        tags: ['Things'],
        scope: null,
        responses: { 200: { description: 'never' } },
        handler: () => {
          throw new Error('secret internal detail: relation "x" does not exist');
        },
      });
      api.route({
        method: 'get',
        path: '/slow',
        operationId: 'slow',
        summary: 'Takes a while',
        tags: ['Things'],
        scope: null,
        responses: { 200: { description: 'done' } },
        handler: async (_req, res) => {
          // unref: a request cut off by a shutdown test must not keep jest's process alive.
          await new Promise((resolve) => setTimeout(resolve, options.slowMs ?? 500).unref());
          res.json({ done: true });
        },
      });
    },
  });
  return { ...service, logger, logs: lines, created: () => created };
}
