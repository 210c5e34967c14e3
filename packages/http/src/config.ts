import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { ORIGIN_LIST_PATTERN } from './hardening';
import { STREAMED_FILE_IDLE_TIMEOUT_MS } from './streamed-file';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });
addFormats(ajv);

/**
 * Parses the environment once, at boot, against a schema; a missing or bad
 * value stops the process with a message that names the variable.
 * Empty strings count as unset, as shells and compose files produce them.
 */
export function loadConfig<T extends TObject>(schema: T, env: NodeJS.ProcessEnv = process.env): Static<T> {
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const validate = ajv.compile(schema);
  if (!validate(input)) {
    const problems = (validate.errors ?? []).map((error) => {
      const name = error.keyword === 'required' ? String(error.params.missingProperty) : error.instancePath.slice(1);
      return error.keyword === 'required'
        ? `${name} is required`
        : `${name} ${error.message} (got ${JSON.stringify(env[name])})`;
    });
    throw new ConfigError(problems);
  }
  return input as Static<T>;
}

/**
 * EXPORT_IDLE_TIMEOUT_MS of a service that streams files (sendStreamedFile's `idleTimeoutMs`): a
 * response whose reader takes no byte for this long is ended, its cursor and connection freed.
 */
export const exportIdleTimeoutConfigProperties = {
  EXPORT_IDLE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: STREAMED_FILE_IDLE_TIMEOUT_MS,
    description:
      'A streamed export whose reader takes no byte for this long (ms) is cut short, leaving an incomplete file, ' +
      'and its database cursor and connection are freed.',
  }),
};

/**
 * Settings every service reads, spread into each service's own schema. Each `description` is what
 * docs/configuration.md says of the variable (scripts/config-docs.js writes the page from them).
 */
export const commonConfigProperties = {
  NODE_ENV: Type.String({
    default: 'development',
    description:
      "`production` requires the keys a replica cannot make up alone (desk's signing key, the encryption keys) " +
      "and turns off desk's development client and its default token-endpoint CORS origins; any other value is " +
      'development.',
  }),
  HOST: Type.String({ default: '0.0.0.0', description: 'Address the HTTP server listens on.' }),
  DATABASE_URL: Type.String({
    pattern: '^postgres(ql)?://',
    description: "The service's own PostgreSQL database; its migrations are applied to it at start.",
  }),
  DATABASE_READ_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        "A read-only replica of DATABASE_URL (e.g. HAProxy's replica port) for the reads that tolerate replica lag: list " +
        "pages with their totals and the streamed exports. A read that follows the caller's own write in the same request " +
        'stays on the primary. Unset: everything reads the primary.',
    }),
  ),
  DATABASE_POOL_ACQUIRE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 10_000,
    description:
      "How long a request waits for a connection of the service's database pool (all busy, or the database slow to " +
      'accept one) before it answers 503 with Retry-After.',
  }),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?://',
      description:
        "Redis shared by every instance: rate-limit counters, Idempotency-Key records, desk's token-guessing " +
        "counters and hr's export leases. Unset: kept in the process, right for one instance only. With " +
        'REDIS_SENTINELS, only its password and database number are used.',
    }),
  ),
  REDIS_SENTINELS: Type.Optional(
    Type.String({
      pattern: '^\\s*[^,\\s]+(\\s*,\\s*[^,\\s]+)*\\s*$',
      description:
        'Redis Sentinels (`host:port,host:port`, port 26379 by default): every Redis client of the service asks them ' +
        'for the master named REDIS_SENTINEL_NAME and follows it through a failover; an Idempotency-Key record is ' +
        "acknowledged only once a replica has it. Takes precedence over REDIS_URL's host.",
    }),
  ),
  REDIS_SENTINEL_NAME: Type.String({
    default: 'mymaster',
    description: "The master's name in the Sentinels' configuration (`sentinel monitor <name> …`).",
  }),
  LOG_LEVEL: Type.Union([Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug')], {
    default: 'info',
    description: 'The lowest level logged. Logs are JSON lines on stdout; `info` includes one line per request.',
  }),
  RATE_LIMIT_PER_MINUTE: Type.Integer({
    minimum: 1,
    default: 600,
    description: 'Requests per minute per API client (per client address without a valid token) on the API.',
  }),
  BODY_LIMIT: Type.String({
    default: '1mb',
    pattern: '^\\d+(b|kb|mb)$',
    description: 'The largest request body accepted; a larger one is answered 413.',
  }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    default: 10000,
    description:
      'After SIGTERM, how long in-flight requests may take before the service closes its database and Redis ' +
      'connections and exits.',
  }),
  TRUST_PROXY: Type.String({
    default: 'loopback, linklocal, uniquelocal',
    description:
      'Express `trust proxy`: the hops whose `X-Forwarded-*` headers are believed. The client address that rate ' +
      "limits and desk's token guard count by comes from them, so name only proxies that overwrite " +
      '`X-Forwarded-For`.',
  }),
  AUTH_ISSUER: Type.String({
    default: 'http://localhost:3001/api/v1',
    description:
      'The `iss` of tokens: desk signs with it and publishes it in its OAuth metadata; link and hr require it.',
  }),
  AUTH_AUDIENCE: Type.String({
    default: 'msp-api',
    description: 'The `aud` of tokens: desk signs with it; every service requires it.',
  }),
  AUTH_JWKS_URL: Type.String({
    default: 'http://localhost:3001/api/v1/.well-known/jwks.json',
    pattern: '^https?://',
    description:
      "desk's JWKS, where link and hr fetch the token-signing keys (cached, fetched again once for an unknown " +
      '`kid`). desk itself uses its own keys.',
  }),
  API_CORS_ORIGINS: Type.Optional(
    Type.String({
      pattern: ORIGIN_LIST_PATTERN,
      description:
        'Comma-separated origins (`https://portal.example.com`) whose browser pages may call the whole API ' +
        '(CORS, no credentials mode). Unset: no CORS headers.',
    }),
  ),
  HEADERS_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 10000,
    description:
      "A request's headers must arrive within this (ms), else 408 and the connection is closed: against slow " +
      'clients.',
  }),
  REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: 30000,
    description:
      'The whole request, headers and body, must arrive within this (ms), else 408; the response may take ' + 'longer.',
  }),
  OUTBOUND_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: 10000,
    description:
      "Every call to an address a caller chose (webhook endpoints, link's directories) ends after this long " +
      '(ms). Its answer is read up to 10 MB, and redirects are never followed.',
  }),
  OUTBOUND_ALLOWLIST: Type.Optional(
    Type.String({
      description:
        'Comma-separated host names, IP addresses or CIDR ranges that such calls may reach although internal. In ' +
        'every mode they reach public unicast addresses only, checked again where the socket connects.',
    }),
  ),
  OUTBOUND_ALLOW_LOOPBACK: Type.Boolean({
    default: false,
    description:
      '`true` lets such calls reach loopback (`127.0.0.0/8`, `::1`) and nothing else internal: receivers and ' +
      "directories on a developer's machine. `pnpm start` sets it.",
  }),
  // Checked by each service (encryptionKeyProblems) rather than by a pattern, so a malformed key is never echoed.
  WEBHOOK_ENCRYPTION_KEY: Type.Optional(
    Type.String({
      description:
        '32 random bytes, base64 (`openssl rand -base64 32`): the AES-256-GCM key of webhook signing secrets at ' +
        'rest. Required in production; elsewhere generated once into `$DATA_DIR/webhook-encryption.key`.',
    }),
  ),
  WEBHOOK_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 32,
    description: 'Webhook deliveries in flight at once per instance.',
  }),
} satisfies TProperties;
