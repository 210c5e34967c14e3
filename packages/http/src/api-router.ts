import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Static, TSchema } from '@sinclair/typebox';
import { AppError, notFound, validationFailed, type FieldError } from './errors';
import { checkIfMatch } from './conditional';
import { createRouteOf, type Idempotency } from './idempotency';
import type { OperationDoc, ResponseSpec } from './openapi';
import {
  compileValidator,
  unstorableFields,
  MAX_BODY_DEPTH,
  nestedDeeperThan,
  toFieldErrors,
  type Location,
} from './validation';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Infer<T> = T extends TSchema ? Static<T> : undefined;

export interface RouteInput<P, Q, B> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
}

export interface RouteSpec<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
> {
  method: Method;
  /** Express-style path relative to /api/v1, e.g. `/tickets/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** The scope a caller needs (several: space-separated, all needed); `null` makes the route public (no token). */
  scope: string | null;
  params?: P;
  query?: Q;
  body?: B;
  /** Content types the body may come in; JSON by default. */
  consumes?: string[];
  responses: Record<number, ResponseSpec>;
  /** Error statuses this route can answer besides the ones derived from its shape. */
  errors?: number[];
  /** Turns body validation failures into another error (the OAuth endpoints answer in RFC 6749 terms). */
  onInvalidBody?: (errors: FieldError[]) => AppError;
  /**
   * Whether the route takes an Idempotency-Key; by default every POST that creates (201, or 202 for
   * a queued run). `false` for a route whose answer must not be kept, e.g. one holding a secret;
   * `true` for a POST that acts on a resource and answers 200.
   */
  idempotent?: boolean;
  /** Run after authentication and before validation (e.g. a tighter rate limit). */
  before?: RequestHandler[];
  /**
   * A GET of one resource: its representation, loaded through the service (an AppError 404 when
   * there is none). Without a `handler` the GET answers it with res.json. A PATCH, PUT or DELETE of
   * the same path compares its If-Match with the ETag of what this loads, so every GET that shares
   * its path with a write has one.
   */
  load?: (req: Request, input: RouteInput<P, Q, B>) => Promise<unknown>;
  /** Answers the request; a GET with `load` may leave it out. */
  handler?: (req: Request, res: Response, input: RouteInput<P, Q, B>) => unknown;
}

export interface ApiRouter {
  router: express.Router;
  route<
    P extends TSchema | undefined = undefined,
    Q extends TSchema | undefined = undefined,
    B extends TSchema | undefined = undefined,
  >(
    spec: RouteSpec<P, Q, B>,
  ): void;
  operations: OperationDoc[];
}

export interface ApiRouterOptions {
  /** The router the routes go on; a new one by default. */
  router?: express.Router;
  /** Rejects callers that lack the scope (401 without a valid token, 403 without the scope). */
  requireScope: (scope: string) => RequestHandler;
  /** Largest accepted body (larger: 413); default 1mb. */
  bodyLimit?: string;
  /** Idempotency-Key on every POST that creates (answers 201). */
  idempotency?: Idempotency;
  /** The lock every write to one resource holds (see `handle`); per process when not given. */
  resourceLock?: ResourceLock;
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * Bodies are read per route, after the scope check: a caller without the right
 * token is refused before a byte of its body is parsed, and a route can answer
 * a malformed body in its own terms (the OAuth endpoints' invalid_request).
 */
function bodyReader(limit: string) {
  const json = express.json({ limit, type: ['application/json', 'application/*+json'] });
  const form = express.urlencoded({ extended: false, limit });
  return (consumes: string[], onInvalid?: (errors: FieldError[]) => AppError): RequestHandler => {
    const parsers = [json, ...(consumes.includes(FORM) ? [form] : [])];
    return (req, res, next) => {
      const run = (index: number): void => {
        const parser = parsers[index];
        if (!parser) return next(tooDeep(req.body, onInvalid));
        parser(req, res, (error?: unknown) => {
          if (!error) return run(index + 1);
          const malformed = (error as { type?: string }).type === 'entity.parse.failed';
          next(malformed && onInvalid ? onInvalid([{ field: '(body)', message: 'is not valid JSON' }]) : error);
        });
      };
      run(0);
    };
  };
}

/** A 400 for a body nested past MAX_BODY_DEPTH, before anything walks it. */
function tooDeep(body: unknown, onInvalid?: (errors: FieldError[]) => AppError): AppError | undefined {
  if (!nestedDeeperThan(body, MAX_BODY_DEPTH)) return undefined;
  const errors = [
    { field: '(body)', message: `must not nest arrays and objects more than ${MAX_BODY_DEPTH} levels deep` },
  ];
  return onInvalid ? onInvalid(errors) : validationFailed(errors, 'The request body is nested too deeply.');
}

function hasBody(req: Request): boolean {
  const length = req.get('content-length');
  return (length !== undefined && Number(length) > 0) || req.get('transfer-encoding') !== undefined;
}

function validator(schema: TSchema, location: Location, onInvalid?: (errors: FieldError[]) => AppError) {
  const validate = compileValidator(schema, location);
  return (value: unknown) => {
    const unstorable = location === 'params' ? [] : unstorableFields(value);
    if (unstorable.length) {
      const errors = unstorable.map(({ field, message }) => ({ field: field || `(${location})`, message }));
      if (onInvalid) throw onInvalid(errors);
      throw validationFailed(
        errors,
        location === 'query' ? 'One or more query parameters are not valid.' : 'The request body is not valid.',
      );
    }
    if (validate(value)) return value;
    if (location === 'params') throw notFound(); // a malformed id cannot name anything that exists
    const errors = toFieldErrors(validate.errors, location);
    if (onInvalid) throw onInvalid(errors);
    throw validationFailed(
      errors,
      location === 'query' ? 'One or more query parameters are not valid.' : 'The request body is not valid.',
    );
  };
}

function errorsOf(
  spec: Pick<RouteSpec<TSchema, TSchema, TSchema>, 'scope' | 'params' | 'query' | 'body' | 'errors'>,
): number[] {
  const statuses = new Set<number>(spec.errors ?? []);
  if (spec.query || spec.body) statuses.add(400);
  if (spec.scope) [401, 403].forEach((s) => statuses.add(s));
  if (spec.params) statuses.add(404);
  if (spec.body) [413, 415].forEach((s) => statuses.add(s));
  statuses.add(429);
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

/**
 * Runs `task` holding the lock named `key`: of two tasks of one key the second starts after the
 * first has ended. The service's lock is shared by all its instances (@msp/db's
 * advisoryResourceLock); without one, tasks are queued per process (per key), which holds only
 * for a single instance.
 */
export type ResourceLock = <T>(key: string | readonly string[], task: () => Promise<T>) => Promise<T>;

/**
 * The key of the resource lock a write to `path` (the route's pattern, e.g. `/onboardings/:id`)
 * with these validated `params` takes for `tenantId`. Work outside a request that must not
 * interleave with such a write takes the same lock with the same key: link's run workers on their
 * run, desk's bulk change and merge on each ticket they write (so they queue with its PATCHes).
 */
export function resourceLockKey(tenantId: string | undefined, path: string, params: unknown): string {
  return `${tenantId ?? ''} ${path} ${JSON.stringify(params ?? {})}`.toLowerCase();
}

function processLock(): ResourceLock {
  const queues = new Map<string, Promise<unknown>>();
  const one = async <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const previous = queues.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(task);
    queues.set(key, current);
    try {
      return await current;
    } finally {
      if (queues.get(key) === current) queues.delete(key);
    }
  };
  // Several keys: one after the other in sorted order (two holders of overlapping sets cannot deadlock).
  return <T>(key: string | readonly string[], task: () => Promise<T>): Promise<T> => {
    if (typeof key === 'string') return one(key, task);
    return [...new Set(key)].sort().reduceRight<() => Promise<T>>((inner, k) => () => one(k, inner), task)();
  };
}

export function createApiRouter(options: ApiRouterOptions): ApiRouter {
  const router = options.router ?? express.Router();
  // Consecutive routes of one path share one Express route (`router.route(path).get(…).patch(…)`);
  // a path met again later gets a route of its own there, since Express matches in registration order.
  let current: { path: string; route: express.IRoute } | undefined;
  const operations: OperationDoc[] = [];
  const readBody = bodyReader(options.bodyLimit ?? '1mb');
  const lock = options.resourceLock ?? processLock();
  /** The loader of each path's GET, which a write's If-Match is checked against. */
  const loaders = new Map<string, (req: Request, input: RouteInput<TSchema, TSchema, TSchema>) => Promise<unknown>>();
  // A write beside a GET without a loader could not check If-Match: refused when registered, in either order.
  const getsWithoutLoad = new Set<string>();
  const writePaths = new Set<string>();

  function route<P extends TSchema | undefined, Q extends TSchema | undefined, B extends TSchema | undefined>(
    spec: RouteSpec<P, Q, B>,
  ) {
    const checkParams = spec.params ? validator(spec.params, 'params') : undefined;
    const checkQuery = spec.query ? validator(spec.query, 'query') : undefined;
    const checkBody = spec.body ? validator(spec.body, 'body', spec.onInvalidBody) : undefined;
    const consumes = spec.consumes ?? ['application/json'];
    // A POST that creates (answers 201, or 202 for a queued run) takes an Idempotency-Key; another
    // POST when it says so (`idempotent: true`: an action answering 200).
    const idempotent = Boolean(
      options.idempotency &&
      spec.method === 'post' &&
      (spec.idempotent ?? Boolean(spec.responses[201] || spec.responses[202])),
    );
    const createRoute = createRouteOf(spec.path, spec.responses[201] ? 201 : spec.responses[202] ? 202 : 200);

    const isWrite = spec.method === 'patch' || spec.method === 'put' || spec.method === 'delete';
    if (spec.method === 'get' && spec.load) loaders.set(spec.path, spec.load as never);
    if (spec.method === 'get' && !spec.load) getsWithoutLoad.add(spec.path);
    if (isWrite) writePaths.add(spec.path);
    if (getsWithoutLoad.has(spec.path) && writePaths.has(spec.path)) {
      throw new Error(`${spec.path}: its GET needs a load function, which its writes check If-Match against`);
    }
    const { load: loadOwn, handler } = spec;
    if (!handler && !loadOwn)
      throw new Error(
        `${spec.method.toUpperCase()} ${spec.path}: a route needs a handler (or, a GET, a load function)`,
      );
    const answer =
      handler ??
      (async (_req: Request, res: Response, input: RouteInput<P, Q, B>) => res.json(await loadOwn!(_req, input)));

    const handle: RequestHandler = async (req, res) => {
      const params = checkParams ? checkParams({ ...req.params }) : undefined;
      if (spec.body && hasBody(req) && !req.is(consumes)) {
        throw new AppError(415, `The request body must be sent as ${consumes.join(' or ')}.`, {
          code: 'unsupported-media-type',
          headers: { 'Accept-Post': consumes.join(', ') },
        });
      }
      // Express 5 exposes req.query as a getter: validate (and coerce) a copy.
      const query = checkQuery ? checkQuery({ ...(req.query as object) }) : undefined;
      let body: unknown;
      if (checkBody) {
        if (req.body === undefined) {
          const missing = [{ field: '(body)', message: 'is required' }];
          throw spec.onInvalidBody
            ? spec.onInvalidBody(missing)
            : validationFailed(missing, 'The request body is missing.');
        }
        body = checkBody(req.body);
      }
      const input = { params, query, body } as RouteInput<P, Q, B>;
      const run = async () => answer(req, res, input);
      const load = isWrite ? loaders.get(spec.path) : undefined;
      if (load) {
        // Every write to one resource, with If-Match or without, holds the resource's lock from
        // before If-Match is checked against a fresh read until its own change has committed (the
        // handler has returned): of two writers holding the same tag, on any instance, the second
        // reads the first's change and gets its 412, and no write slips in between a check and
        // the change it guards. The key is the route and its validated parameters (ids in one
        // case), so two spellings of one resource's path share it.
        const key = resourceLockKey(req.principal?.tenantId, spec.path, params);
        await lock(key, async () => {
          await checkIfMatch(req, () => load(req, { params, query: undefined, body: undefined } as never));
          await run();
        });
        return;
      }
      if (idempotent) await options.idempotency!.run(req, res, run, createRoute);
      else await run();
    };

    const chain: RequestHandler[] = [];
    if (spec.scope) chain.push(options.requireScope(spec.scope));
    if (spec.body) chain.push(readBody(consumes, spec.onInvalidBody));
    chain.push(...(spec.before ?? []), handle);
    if (current?.path !== spec.path) current = { path: spec.path, route: router.route(spec.path) };
    current.route[spec.method](...chain);
    operations.push({
      method: spec.method,
      path: spec.path,
      operationId: spec.operationId,
      summary: spec.summary,
      description: spec.description,
      tags: spec.tags,
      scope: spec.scope,
      params: spec.params,
      query: spec.query,
      body: spec.body,
      consumes,
      responses: spec.responses,
      errors: idempotent ? [...new Set([...errorsOf(spec), 409, 422])].sort((a, b) => a - b) : errorsOf(spec),
      idempotent,
    });
  }

  return { router, route, operations };
}
