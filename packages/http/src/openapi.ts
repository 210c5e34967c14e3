import type { TSchema } from '@sinclair/typebox';
import { schemaName } from './schema-names';
import { STATUS_TITLES } from './errors';
import { withImpliedBounds } from './openapi-bounds';

export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json when a schema is given; several for a route that answers in more than one (a file export). */
  contentType?: string | string[];
  headers?: Record<string, { description: string; schema?: object }>;
  /** Shown on the API reference page when the schema's own example does not fit this response. */
  example?: unknown;
}

export interface OperationDoc {
  method: string;
  /** Express-style path relative to the API base (`/tickets/:id`). */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  scope?: string | null;
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  consumes?: string[];
  responses: Record<number, ResponseSpec>;
  errors: number[];
  /** Takes an Idempotency-Key header (a POST that creates). */
  idempotent?: boolean;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  /** Where the token endpoint lives (desk), for the oauth2 security scheme. */
  tokenUrl: string;
  scopes: Record<string, string>;
  tags?: { name: string; description: string }[];
  /** Requests this service sends to its subscribers (OpenAPI 3.1 `webhooks`), e.g. one per event type. */
  webhooks?: OutgoingWebhookDoc[];
}

/** One kind of request the service sends out: its body schema and the headers it carries. */
export interface OutgoingWebhookDoc {
  name: string;
  summary: string;
  description?: string;
  schema: TSchema;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'An RFC 9457 problem document.',
  required: ['type', 'title', 'status', 'detail', 'request_id'],
  properties: {
    type: { type: 'string', description: '`about:blank` or `urn:msp:problem:<code>`.' },
    title: { type: 'string' },
    status: { type: 'integer', format: 'int32', minimum: 400, maximum: 599 },
    detail: { type: 'string' },
    request_id: { type: 'string', description: 'Quote it to support; equals the X-Request-Id header.' },
    instance: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
  additionalProperties: true,
};

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed in the current window.',
    schema: { type: 'integer', format: 'int32' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', format: 'int32' },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) at which the window resets.',
    schema: { type: 'integer', format: 'int64' },
  },
  RateLimit: { description: 'IETF draft-8 RateLimit header.', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF draft-8 RateLimit-Policy header.', schema: { type: 'string' } },
  'X-Request-Id': { description: "The caller's request id, or a generated one.", schema: { type: 'string' } },
};

/**
 * Sent only to a browser page of an origin the service lets in (API_CORS_ORIGINS; desk's token
 * endpoint: CORS_ORIGINS), none by default. Said once under components and referred to from every
 * response, each of which may carry it.
 */
const CORS_ORIGIN_HEADER_NAME = 'Access-Control-Allow-Origin';
const CORS_ORIGIN_HEADER = {
  description:
    'Only on a request whose `Origin` is one the service lets in (`API_CORS_ORIGINS`; ' +
    "for desk's token endpoint `CORS_ORIGINS`), that origin; absent otherwise. No origin is let in by default.",
  schema: { type: 'string', format: 'uri' },
};
const CORS_ORIGIN_HEADER_REF = { $ref: `#/components/headers/${CORS_ORIGIN_HEADER_NAME}` };

const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before trying again.',
  schema: { type: 'integer', format: 'int32', minimum: 0 },
};

/** A response's headers: the route's own, each schema with the bounds it implies, and the CORS header. */
function responseHeaders(status: string, headers: Record<string, { description: string; schema?: object }>) {
  const out: Record<string, unknown> = {};
  for (const [name, header] of Object.entries(headers)) {
    out[name] = header.schema
      ? { ...header, schema: withImpliedBounds(header.schema as Record<string, unknown>) }
      : header;
  }
  // Every 429 says when to come back (the rate limiter, and routes refusing work already running).
  if (status === '429') out['Retry-After'] ??= RETRY_AFTER_HEADER;
  out[CORS_ORIGIN_HEADER_NAME] = CORS_ORIGIN_HEADER_REF;
  return out;
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry (IETF httpapi Idempotency-Key): the same key with the same request within 24 hours answers the first response again, ' +
    'with `Idempotent-Replayed: true`, and creates nothing. The same key with another request is 422; while the first request with the key still runs, 409. ' +
    'Keys are per API client; use a new UUID for each new request.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
};

const ETAG_HEADER = {
  description:
    'Strong entity tag of this representation; send it in `If-Match` to change the resource only if nobody else has.',
  schema: { type: 'string' },
};
const IF_NONE_MATCH_PARAMETER = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'An ETag you hold: answered 304 without a body while it is still current.',
  schema: { type: 'string' },
};
const IF_MATCH_PARAMETER = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'The ETag the change is based on: if the resource has changed since (its current ETag differs), ' +
    'the answer is 412 and nothing changes. `*` matches any existing resource.',
  schema: { type: 'string' },
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation failed: malformed JSON, wrong types, missing or unknown fields, bad query parameters.',
  401: 'The access token is missing, invalid or expired (`WWW-Authenticate: Bearer error="invalid_token"`).',
  403: 'The token lacks the required scope (`WWW-Authenticate: Bearer error="insufficient_scope"`).',
  404: "The resource does not exist in the caller's tenant.",
  409: 'Conflict with the existing state (duplicate, overlap, run in progress).',
  412: 'The `If-Match` ETag is no longer current: the resource changed since it was read. Nothing was changed.',
  413: 'The request body is too large.',
  415: 'The request body is not of a supported content type.',
  422: 'The request is well-formed but breaks a business rule.',
  429: 'Rate limit reached; see `Retry-After`.',
  500: 'Unexpected server error; contact support quoting `request_id`.',
  503: 'The service is not ready.',
};

// What the shared error responses look like, shown on the API reference pages.
const ERROR_EXAMPLES: Record<
  number,
  { code: string; detail: string; title?: string; errors?: { field: string; message: string }[] }
> = {
  400: {
    code: 'validation-error',
    title: 'Validation failed',
    detail: 'The request is not valid.',
    errors: [{ field: 'title', message: 'must NOT have fewer than 1 characters' }],
  },
  401: { code: 'invalid-token', detail: 'The access token has expired.' },
  403: { code: 'insufficient-scope', detail: 'This operation requires scope write:tickets.' },
  404: { code: 'not-found', detail: 'No ticket 7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70.' },
  409: { code: 'conflict', detail: 'An employee with personnel number 10042 already exists.' },
  412: {
    code: 'precondition-failed',
    detail:
      'The resource has changed since the ETag given in If-Match: GET it again and retry with its current ETag. Nothing was changed.',
  },
  413: { code: 'body-too-large', detail: 'The request body exceeds the limit of 1048576 bytes.' },
  415: { code: 'unsupported-media-type', detail: 'The request body must be application/json.' },
  422: { code: 'unprocessable', detail: 'The request breaks a business rule.' },
  429: {
    code: 'rate-limited',
    detail: 'Rate limit of 600 requests per 60 seconds reached. Retry after the time given in Retry-After.',
  },
  500: { code: 'internal-error', detail: 'An unexpected error occurred. Quote the request_id to support.' },
  503: {
    code: 'desk-unavailable',
    title: 'Helpdesk unavailable',
    detail: 'The helpdesk could not be asked about user 0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01: timeout.',
  },
};

function errorExample(status: number) {
  const example = ERROR_EXAMPLES[status]!;
  return {
    type: `urn:msp:problem:${example.code}`,
    title: example.title ?? STATUS_TITLES[status],
    status,
    detail: example.detail,
    request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
    ...(example.errors ? { errors: example.errors } : {}),
  };
}

export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Keywords whose values are data (values, not schemas): copied as they are. */
const DATA_KEYWORDS = new Set(['examples', 'example', 'default', 'const', 'enum']);
/** Keywords whose values map names to schemas: each value is a schema, the map itself is not. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * Turns a schema into its OpenAPI form: named sub-schemas become $refs into components (collected
 * as a side effect), each schema object states the bounds it implies (openapi-bounds.ts), and
 * everything else is copied as is.
 */
function emit(schema: unknown, components: Record<string, unknown>, top = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => emit(item, components));
  if (schema === null || typeof schema !== 'object') return schema;
  const name = schemaName(schema);
  if (name && !top) {
    if (!(name in components)) {
      components[name] = null; // reserve first: a schema may refer to itself
      components[name] = emit(schema, components, true);
    }
    return { $ref: `#/components/schemas/${name}` };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAP_KEYWORDS.has(key) && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).map(([member, sub]) => [member, emit(sub, components)]));
    } else out[key] = emit(value, components);
  }
  return withImpliedBounds(out);
}

function parameters(schema: TSchema | undefined, where: 'path' | 'query', components: Record<string, unknown>) {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    // A query parameter with a default (page, per_page) may be left out, though TypeBox lists it as required.
    required: where === 'path' || (required.has(name) && property.default === undefined),
    ...(property.description ? { description: property.description } : {}),
    schema: emit({ ...property, description: undefined }, components),
  }));
}

function responseContent(response: ResponseSpec, components: Record<string, unknown>) {
  const schema = response.schema ? emit(response.schema, components) : { type: 'string' };
  const types = [response.contentType ?? 'application/json'].flat();
  return Object.fromEntries(
    types.map((type) => [type, { schema, ...(response.example === undefined ? {} : { example: response.example }) }]),
  );
}

/** A route's scope may list several, space-separated: the caller needs all of them. */
function requiresScopes(scope: string): string {
  if (scope === 'admin:tenant') return 'Requires scope `admin:tenant`.';
  const scopes = scope.split(' ').map((one) => `\`${one}\``);
  return scopes.length > 1
    ? `Requires scopes ${scopes.join(' and ')} (or \`admin:tenant\`).`
    : `Requires scope ${scopes[0]} (or \`admin:tenant\`).`;
}

export function buildOpenApiDocument(info: OpenApiInfo, serverUrl: string, operations: OperationDoc[]) {
  const components: Record<string, unknown> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const usedErrors: number[] = [];
  for (const op of operations) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(op.responses)) {
      responses[status] = {
        description: response.description,
        headers: responseHeaders(status, { ...RATE_LIMIT_HEADERS, ...(response.headers ?? {}) }),
        ...(response.schema || response.contentType ? { content: responseContent(response, components) } : {}),
      };
    }
    // ETags (RFC 9110 §13): a GET of one resource can be conditional; a write to a path that has
    // a GET checks If-Match against it.
    const item = op.path.endsWith(':id') || /:[a-z_]+$/.test(op.path);
    const readable = operations.some((other) => other.method === 'get' && other.path === op.path);
    const conditionalRead = op.method === 'get' && item;
    const conditionalWrite = ['patch', 'put', 'delete'].includes(op.method) && readable;
    const errors = conditionalWrite ? [...new Set([...op.errors, 412])].sort((a, b) => a - b) : op.errors;
    usedErrors.push(...errors);
    for (const status of ['200', '201']) {
      const response = responses[status] as { headers?: Record<string, unknown> } | undefined;
      if (response && (conditionalRead || conditionalWrite))
        response.headers = { ...response.headers, ETag: ETAG_HEADER };
    }
    if (conditionalRead) {
      responses['304'] = {
        description: 'Not modified: the `If-None-Match` tag is still current. No body.',
        headers: responseHeaders('304', { ETag: ETAG_HEADER }),
      };
    }
    // A route's own description of an error (e.g. OAuth's error codes) wins over the generic one.
    for (const status of errors) responses[String(status)] ??= { $ref: `#/components/responses/Error${status}` };
    const operation: Record<string, unknown> = {
      operationId: op.operationId,
      summary: op.summary,
      description: [
        op.description,
        op.scope === 'authenticated'
          ? 'Requires a valid access token; no particular scope.'
          : op.scope
            ? requiresScopes(op.scope)
            : 'No token required.',
      ]
        .filter(Boolean)
        .join('\n\n'),
      tags: op.tags,
      parameters: [
        ...parameters(op.params, 'path', components),
        ...parameters(op.query, 'query', components),
        ...(op.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : []),
        ...(conditionalRead ? [IF_NONE_MATCH_PARAMETER] : []),
        ...(conditionalWrite ? [IF_MATCH_PARAMETER] : []),
      ],
      responses,
      security: op.scope === 'authenticated' ? [{ oauth2: [] }] : op.scope ? [{ oauth2: op.scope.split(' ') }] : [],
    };
    if (op.body) {
      const content: Record<string, unknown> = {};
      for (const type of op.consumes ?? ['application/json']) content[type] = { schema: emit(op.body, components) };
      operation.requestBody = { required: true, content };
    }
    const path = toOpenApiPath(op.path);
    (paths[path] ??= {})[op.method] = operation;
  }
  const errorResponses: Record<string, unknown> = {};
  // Only the error responses some operation refers to: unused components are lint noise.
  const usedStatuses = new Set(usedErrors);
  for (const status of Object.keys(ERROR_DESCRIPTIONS)
    .map(Number)
    .filter((s) => usedStatuses.has(s))) {
    errorResponses[`Error${status}`] = {
      description: `${STATUS_TITLES[status]}. ${ERROR_DESCRIPTIONS[status]}`,
      headers: responseHeaders(String(status), RATE_LIMIT_HEADERS),
      content: {
        'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example: errorExample(status) },
      },
    };
  }
  const webhooks: Record<string, unknown> = {};
  for (const hook of info.webhooks ?? []) {
    webhooks[hook.name] = {
      post: {
        operationId: `webhook_${hook.name.replace(/[^A-Za-z0-9]+/g, '_')}`,
        summary: hook.summary,
        ...(hook.description ? { description: hook.description } : {}),
        tags: ['Webhooks'],
        security: [],
        parameters: Object.entries(hook.headers ?? {}).map(([name, header]) => ({
          name,
          in: 'header',
          required: true,
          ...header,
        })),
        requestBody: { required: true, content: { 'application/json': { schema: emit(hook.schema, components) } } },
        responses: {
          '200': {
            description: 'Any 2xx ends the delivery; anything else, or no answer within the timeout, is retried.',
          },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: info.description,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    tags: info.tags ?? [...new Set(operations.flatMap((op) => op.tags))].map((name) => ({ name, description: name })),
    security: [{ oauth2: [] }],
    paths,
    ...(info.webhooks?.length ? { webhooks } : {}),
    components: {
      schemas: { ...components, Problem: PROBLEM_SCHEMA },
      responses: errorResponses,
      headers: { [CORS_ORIGIN_HEADER_NAME]: CORS_ORIGIN_HEADER },
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description:
            'JWT access tokens issued by the helpdesk token endpoint; `admin:tenant` satisfies ' +
            "every scope. Asking for no scope gets all of the client's scopes. " +
            'A service client\'s token carries `client_kind: "service"` (any other: `"tenant"`). Only with ' +
            'such a token is an `X-On-Behalf-Of: <client id>` header on a write honoured: ' +
            "the audit log records it as `actor.on_behalf_of`, that service client's claim (not verified), next " +
            'to `actor.client_id`, the accountable caller. From any other token the header is ignored. ' +
            'Tokens follow RFC8725 (JSON Web Token Best Current Practices): signed with an asymmetric key ' +
            '(ES256, or RS256) named by `kid`, verified against that allow-list of algorithms (never `none`, ' +
            'never HMAC), with `iss`, `aud` and `exp` checked. Access tokens live an hour; the refresh token ' +
            'of the grant gets a new pair (`grant_type=refresh_token` at the same endpoint).',
          // The token endpoint also takes grant_type=refresh_token: the same URL refreshes.
          flows: { clientCredentials: { tokenUrl: info.tokenUrl, refreshUrl: info.tokenUrl, scopes: info.scopes } },
        },
      },
    },
  };
}
