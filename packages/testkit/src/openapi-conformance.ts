/* eslint-disable @typescript-eslint/no-explicit-any -- an OpenAPI document walked by JSON pointer: its nodes have no static type */
import type http from 'node:http';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { fetchOpenApi } from './openapi-walk';

// A response is checked against the service's own OpenAPI document: its
// status must be documented for the operation, its content type must be one the operation
// declares, and its body must validate against the declared schema. A route that answers
// something its document does not say fails whatever test called it.

const API_BASE = '/api/v1';
/** Served beside the document, not described by it. */
const UNDOCUMENTED = new Set([`${API_BASE}/openapi.json`, `${API_BASE}/docs`]);
const DOCUMENT_ID = 'https://service.test/openapi.json';

interface Route {
  template: string;
  pattern: RegExp;
  literal: number;
}

/** What the check reads of an answer: a supertest Response has all of it, and so has a recorded one. */
export interface CheckedResponse {
  status: number;
  headers: Record<string, unknown>;
  /** The parsed JSON body (supertest parses JSON only). */
  body?: unknown;
  /** The body as text. */
  text?: string;
}

export interface Checker {
  /** Throws when the answer breaks the document; `body: false` checks status, headers and content type only. */
  check(method: string, url: string, response: CheckedResponse, options?: { body?: boolean }): void;
}

const pointer = (...segments: string[]) => segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function createConformanceChecker(document: Record<string, any>): Checker {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const validators = new Map<string, ValidateFunction>();
  const validatorFor = (ref: string) => {
    let validate = validators.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${ref}` });
      validators.set(ref, validate);
    }
    return validate;
  };

  // Literal paths win over templated ones (`/.well-known/jwks.json` over `/x/{id}`).
  const routes: Route[] = Object.keys(document.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      literal: template.replace(/\{[^}]+\}/g, '').length,
    }))
    .sort((a, b) => b.literal - a.literal);

  function resolveResponse(operationPointer: string, status: number): { pointer: string; body: any } | undefined {
    const operation = ajv.getSchema(`${DOCUMENT_ID}#/${operationPointer}`)?.schema as any;
    let entry = operation?.responses?.[String(status)];
    let at = `${operationPointer}/${pointer('responses', String(status))}`;
    if (entry?.$ref) {
      at = entry.$ref.replace(/^#\//, '');
      entry = at
        .split('/')
        .reduce((node: any, key: string) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    }
    return entry ? { pointer: at, body: entry } : undefined;
  }

  function fail(method: string, url: string, response: CheckedResponse, why: string): never {
    const shown = response.body === undefined ? response.text : JSON.stringify(response.body);
    throw new Error(
      `OpenAPI conformance: ${method.toUpperCase()} ${url} answered ${response.status}: ${why}\nbody: ${shown?.slice(0, 500)}`,
    );
  }

  /** Each documented header the answer carries must match its schema (`Retry-After: undefined` is no integer). */
  function checkHeaders(
    method: string,
    url: string,
    response: CheckedResponse,
    responsePointer: string,
    declared: any,
  ) {
    for (const [name, header] of Object.entries<any>(declared.headers ?? {})) {
      const value = response.headers[name.toLowerCase()];
      if (value === undefined || !header?.schema) continue;
      const type = header.schema.type;
      const text = String(value);
      const typed = (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
      const validate = validatorFor(`${responsePointer}/${pointer('headers', name, 'schema')}`);
      if (!validate(typed))
        fail(
          method,
          url,
          response,
          `header ${name}: ${JSON.stringify(text)} does not match its schema: ${ajv.errorsText(validate.errors)}`,
        );
    }
  }

  return {
    check(requestMethod, url, response, options = {}) {
      const path = new URL(url, 'http://x').pathname;
      if (!path.startsWith(`${API_BASE}/`) || UNDOCUMENTED.has(path)) return;
      // A CORS preflight is answered by the middleware before any operation; HEAD is GET without its body.
      if (requestMethod.toLowerCase() === 'options') return;
      const head = requestMethod.toLowerCase() === 'head';
      const readBody = options.body !== false && !head;
      const method = head ? 'get' : requestMethod.toLowerCase();
      const relative = path.slice(API_BASE.length);
      const route = routes.find((r) => r.pattern.test(relative) && document.paths[r.template][method]);
      let responsePointer: string;
      let declared: any;
      if (route) {
        const resolved = resolveResponse(pointer('paths', route.template, method), response.status);
        if (!resolved)
          fail(
            method,
            url,
            response,
            `status ${response.status} is not documented for ${method.toUpperCase()} ${route.template}`,
          );
        ({ pointer: responsePointer, body: declared } = resolved);
      } else {
        // No operation: the answer must be the documented 404 problem.
        if (response.status !== 404)
          fail(method, url, response, 'no documented operation, and the answer is not a 404');
        responsePointer = pointer('components', 'responses', 'Error404');
        declared = document.components.responses.Error404;
      }
      checkHeaders(method, url, response, responsePointer, declared);

      const contentType = String(response.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim();
      const content = declared.content as Record<string, { schema?: unknown }> | undefined;
      if (!content) {
        if (response.text) fail(method, url, response, 'a body was sent where the document declares none');
        return;
      }
      if (head) return;
      // A media range (`*/*`: a file answered in the type it was stored with) takes any type.
      const declaredType = contentType in content ? contentType : '*/*' in content ? '*/*' : undefined;
      if (declaredType === undefined)
        fail(method, url, response, `content type "${contentType}" is not one of ${Object.keys(content).join(', ')}`);
      if (!readBody || !content[declaredType]!.schema || declaredType === '*/*') return;
      const validate = validatorFor(`${responsePointer}/${pointer('content', declaredType, 'schema')}`);
      // supertest parses JSON bodies only; any other declared type (CSV, DATEV text) is its text.
      const body = /json/.test(contentType) ? response.body : response.text;
      if (!validate(body))
        fail(method, url, response, `the body does not match the schema: ${ajv.errorsText(validate.errors)}`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Every answer a test suite receives, checked: the service's request listener wrapped so that each
// response it finishes is recorded (status, headers, body) and checked against the document the
// service serves. Nothing in a test changes; a test that provokes an answer its document does not
// know fails (checkConformanceAfterEachTest), whichever assertion it makes itself.

/** Bodies beyond this are checked for status, headers and content type only (a large export streams megabytes). */
const MAX_RECORDED_BODY_BYTES = 4 * 1024 * 1024;

export interface ConformanceRecorder {
  /** The service's listener, recording and checking every response it finishes. */
  app: http.RequestListener;
  /** The violations recorded since the last call (each names the test that made the request), and forgets them. */
  takeViolations(): string[];
  /** Stops counting this recorder's violations in checkConformanceAfterEachTest (the service is closed). */
  dispose(): void;
}

const liveRecorders = new Set<ConformanceRecorder>();

/** The running test's name (jest), to say which test received an answer. */
function currentTest(): string {
  const state = (globalThis as { expect?: { getState?: () => { currentTestName?: string } } }).expect?.getState?.();
  return state?.currentTestName ?? '(outside a test: a beforeAll or afterAll hook)';
}

function textOf(chunks: Buffer[], contentType: string): string {
  const whole = Buffer.concat(chunks);
  // The DATEV file is Windows-1252; latin1 decodes every byte of it, and its schema is text alone.
  return /charset=(windows-1252|iso-8859-1|latin1)/i.test(contentType)
    ? whole.toString('latin1')
    : whole.toString('utf8');
}

/**
 * Wraps a service's request listener so that every response it finishes is checked against
 * `document` (default: the document the service serves at /api/v1/openapi.json): its status is
 * documented for the operation, its content type is one the operation declares, its body matches
 * that content type's schema and each documented header it carries matches the header's schema.
 * Violations are kept, not thrown (the response goes out unchanged); see takeViolations and
 * checkConformanceAfterEachTest.
 */
export async function recordConformance(
  app: http.RequestListener,
  document?: Record<string, any>,
): Promise<ConformanceRecorder> {
  const checker = createConformanceChecker(document ?? ((await fetchOpenApi(app)) as unknown as Record<string, any>));
  let violations: string[] = [];

  const listener: http.RequestListener = (req, res) => {
    // Read before the app runs: routers rewrite req.url as they descend.
    const method = (req.method ?? 'GET').toLowerCase();
    const url = req.url ?? '/';
    const test = currentTest();
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const keep = (chunk: unknown, encoding: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const bytes =
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk as Uint8Array);
      if (truncated || size + bytes.length > MAX_RECORDED_BODY_BYTES) {
        truncated = true;
        return;
      }
      chunks.push(bytes);
      size += bytes.length;
    };
    // Headers given to writeHead are sent without being kept on the response (getHeaders): kept here.
    const written: Record<string, unknown> = {};
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => http.ServerResponse;
    res.writeHead = ((...args: unknown[]) => {
      const given = args.find((arg, index) => index > 0 && typeof arg === 'object' && arg !== null);
      const pairs: [string, unknown][] = Array.isArray(given)
        ? given.flatMap((item: unknown, index: number, all: unknown[]) =>
            Array.isArray(item)
              ? [[String(item[0]), item[1]] as [string, unknown]]
              : index % 2 === 0
                ? [[String(item), all[index + 1]] as [string, unknown]]
                : [],
          )
        : Object.entries((given ?? {}) as Record<string, unknown>);
      for (const [name, value] of pairs) written[name.toLowerCase()] = value;
      return writeHead(...args);
    }) as typeof res.writeHead;
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return end(...args);
    }) as typeof res.end;
    // Only a response sent whole is judged: one cut short (a stalled reader, a client gone) never finishes.
    res.on('finish', () => {
      const headers = Object.fromEntries(
        Object.entries({ ...res.getHeaders(), ...written }).map(([name, value]) => [
          name.toLowerCase(),
          Array.isArray(value) ? value.join(', ') : value,
        ]),
      );
      const contentType = String(headers['content-type'] ?? '');
      const text = truncated ? undefined : textOf(chunks, contentType);
      let body: unknown = undefined;
      if (text !== undefined && /json/.test(contentType) && text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          violations.push(
            `${test}: ${method.toUpperCase()} ${url} answered ${res.statusCode} with a ${contentType} body that is not JSON`,
          );
          return;
        }
      }
      const response: CheckedResponse = { status: res.statusCode, headers, body, text };
      try {
        checker.check(method, url, response, { body: !truncated });
      } catch (error) {
        violations.push(`${test}: ${(error as Error).message}`);
      }
    });
    app(req, res);
  };

  const recorder: ConformanceRecorder = {
    app: listener,
    takeViolations() {
      const taken = violations;
      violations = [];
      return taken;
    },
    dispose() {
      liveRecorders.delete(recorder);
    },
  };
  liveRecorders.add(recorder);
  return recorder;
}

/** Throws naming every answer of every live recorder that broke its document since the last check. */
export function expectConformingResponses(): void {
  const violations = [...liveRecorders].flatMap((recorder) => recorder.takeViolations());
  if (violations.length > 0)
    throw new Error(
      `${violations.length} response(s) do not match the served OpenAPI document:\n${violations.join('\n\n')}`,
    );
}

/**
 * Fails each test whose requests got an answer the service's document does not describe. Call it
 * once at the top level of a jest setup file (`setupFilesAfterEnv`) of a suite whose services are
 * started with `conformance: true` (or wrapped by recordConformance).
 */
export function checkConformanceAfterEachTest(): void {
  afterEach(() => expectConformingResponses());
}
