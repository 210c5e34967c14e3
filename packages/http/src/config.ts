import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { ORIGIN_LIST_PATTERN } from './hardening';
import { DEFAULT_MEMORY_TARGET_MB } from './memory-reducer';
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
      return error.keyword === 'required' ? `${name} is required` : `${name} ${error.message} (got ${JSON.stringify(env[name])})`;
    });
    throw new ConfigError(problems);
  }
  return input as Static<T>;
}

/** Settings every service reads, spread into each service's own schema. */
/**
 * EXPORT_IDLE_TIMEOUT_MS of a service that streams files (sendStreamedFile's `idleTimeoutMs`): a
 * response whose reader takes no byte for this long is ended, its cursor and connection freed.
 */
export const exportIdleTimeoutConfigProperties = {
  EXPORT_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: STREAMED_FILE_IDLE_TIMEOUT_MS }),
};

export const commonConfigProperties = {
  NODE_ENV: Type.String({ default: 'development' }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  LOG_LEVEL: Type.Union([Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug')], { default: 'info' }),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 600 }),
  BODY_LIMIT: Type.String({ default: '1mb', pattern: '^\\d+(b|kb|mb)$' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 10000 }),
  // RSS (MB) above which the service gives V8's pooled heap pages back with a memory-reducing
  // collection (memory-reducer.ts); 0: never. Acts only where node runs with --expose-gc (the images).
  MEMORY_TARGET_MB: Type.Integer({ minimum: 0, maximum: 1048576, default: DEFAULT_MEMORY_TARGET_MB }),
  TRUST_PROXY: Type.String({ default: 'loopback, linklocal, uniquelocal' }),
  AUTH_ISSUER: Type.String({ default: 'http://localhost:3001/api/v1' }),
  AUTH_AUDIENCE: Type.String({ default: 'msp-api' }),
  AUTH_JWKS_URL: Type.String({ default: 'http://localhost:3001/api/v1/.well-known/jwks.json', pattern: '^https?://' }),
  // Browser pages of these origins may call the API (CORS); unset: none.
  API_CORS_ORIGINS: Type.Optional(Type.String({ pattern: ORIGIN_LIST_PATTERN })),
  // Against slow clients: the request's headers, and the whole request, must arrive within these.
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30000 }),
  // Calls to addresses callers chose (webhooks; link's directories) end after this long, and reach
  // internal addresses only when this allow-list (hosts, IPs, CIDRs) names them, in every mode;
  // loopback as a whole only when OUTBOUND_ALLOW_LOOPBACK says so (`pnpm start` does).
  OUTBOUND_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10000 }),
  OUTBOUND_ALLOWLIST: Type.Optional(Type.String()),
  OUTBOUND_ALLOW_LOOPBACK: Type.Boolean({ default: false }),
  // Webhook signing secrets at rest (AES-256-GCM): 32 random bytes, base64. Required in
  // production; elsewhere each service keeps one of its own under DATA_DIR. Checked by each
  // service (encryptionKeyProblems), so a malformed key is never echoed.
  WEBHOOK_ENCRYPTION_KEY: Type.Optional(Type.String()),
  // Webhook deliveries in flight at once per instance.
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 32 }),
} satisfies TProperties;
