import { Type, type Static } from '@sinclair/typebox';
import { eventsRetentionConfigProperties } from '@msp/events';
import { ALL_SCOPES, parseScope } from '@msp/auth';
import { ConfigError, commonConfigProperties, exportIdleTimeoutConfigProperties, loadConfig } from '@msp/http';
import { isTimeZone } from '@msp/calendar';
import { allowlistProblems } from '@msp/outbound';
import { DEFAULT_CLIENT_FAILURE_LIMIT, DEFAULT_CLIENT_FAILURE_WINDOW_SEC } from './auth/client-guard';
import { encryptionKeyProblems } from '@msp/secrets';
import { DEFAULT_PORTS, parseCorsOrigins } from './auth/token-cors';
import { TIME_EXPORT_ACQUIRE_TIMEOUT_MS } from './time-entries/time-export.repository';
import { parsePreviousPublicKeys, type VerificationKey } from './auth/previous-keys';

export const DeskConfigSchema = Type.Object({
  ...commonConfigProperties,
  ...eventsRetentionConfigProperties,
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: DEFAULT_PORTS.desk,
    description: 'Port the HTTP server listens on.',
  }),
  DATA_DIR: Type.String({
    default: '.data',
    description:
      "Folder of local state: the keys a service generates outside production (desk's signing key, the " +
      'encryption keys).',
  }),
  JWT_PRIVATE_KEY: Type.Optional(
    Type.String({
      description:
        'PEM (PKCS#8, SEC1 or PKCS#1) of the token-signing key: EC P-256 signs ES256, RSA of at least 2048 bits ' +
        'RS256; literal `\\n` allowed. Every replica needs the same key: required in production (or ' +
        'JWT_PRIVATE_KEY_FILE); elsewhere desk generates one into `$DATA_DIR/jwt-signing-key.pem`.',
    }),
  ),
  JWT_PRIVATE_KEY_FILE: Type.Optional(Type.String({ description: 'Path of that PEM, instead of JWT_PRIVATE_KEY.' })),
  JWT_KEY_ID: Type.Optional(
    Type.String({ minLength: 1, description: 'The `kid` of the signing key. Unset: its RFC 7638 thumbprint.' }),
  ),
  JWT_PREVIOUS_PUBLIC_KEYS: Type.Optional(
    Type.String({
      description:
        'Key rotation: PEM public keys (or old private keys) desk signed with before, one block after the other. ' +
        'Served in the JWKS beside the current key, so tokens they signed keep verifying until they expire.',
    }),
  ),
  TOKEN_RATE_LIMIT_PER_MINUTE: Type.Integer({
    minimum: 1,
    default: 30,
    description: 'Token and revoke requests per minute per client address and client id.',
  }),
  TOKEN_CLIENT_FAILURE_LIMIT: Type.Integer({
    minimum: 1,
    default: DEFAULT_CLIENT_FAILURE_LIMIT,
    description:
      'Failed authentications of one client id, from all addresses together, per ' +
      'TOKEN_CLIENT_FAILURE_WINDOW_SEC; past it, 429 except from addresses the client authenticated from.',
  }),
  TOKEN_CLIENT_FAILURE_WINDOW_SEC: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: DEFAULT_CLIENT_FAILURE_WINDOW_SEC,
    description: 'The window of TOKEN_CLIENT_FAILURE_LIMIT, in seconds from the first attempt.',
  }),
  SLA_SWEEP_INTERVAL_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 15_000,
    description:
      'How often each instance looks for SLA targets past their due time; every instance may, as each breach is ' +
      'claimed, and `ticket.sla_breached` recorded, once.',
  }),
  REFRESH_TOKEN_TTL_DAYS: Type.Integer({
    minimum: 1,
    maximum: 365,
    default: 30,
    description: 'Lifetime of refresh tokens.',
  }),
  // The time export: a reader that stops reading would otherwise hold one of its pool's four connections until its socket closes.
  ...exportIdleTimeoutConfigProperties,
  EXPORT_POOL_ACQUIRE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: TIME_EXPORT_ACQUIRE_TIMEOUT_MS,
    description:
      "How long a time export waits for one of its pool's connections before it answers 503 with Retry-After.",
  }),
  BOOTSTRAP_CLIENT_ID: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9._~-]{3,128}$',
      description:
        'With BOOTSTRAP_CLIENT_SECRET: an API client with every scope in BOOTSTRAP_TENANT that desk makes sure ' +
        'exists at each start. In production no client is made otherwise.',
    }),
  ),
  BOOTSTRAP_CLIENT_SECRET: Type.Optional(
    Type.String({ minLength: 16, description: "The bootstrap client's secret (stored hashed)." }),
  ),
  BOOTSTRAP_TENANT: Type.String({
    default: 'default',
    pattern: '^[a-z0-9][a-z0-9-]{0,62}$',
    description: 'Tenant slug of the bootstrap client, and of the development client.',
  }),
  DEV_CLIENT_FILE: Type.Optional(
    Type.String({
      description:
        "Where to write the development client's credentials. Outside production and without a bootstrap " +
        'client, desk creates that client once and prints them; `pnpm start` sets this.',
    }),
  ),
  CORS_ORIGINS: Type.Optional(
    Type.String({
      description:
        "Comma-separated origins whose pages may call the token endpoint from a browser (the reference pages' " +
        '"try it"). Unset: in development `http://localhost` and `http://127.0.0.1` on desk\'s PORT, LINK_PORT ' +
        'and HR_PORT; in production none.',
    }),
  ),
  LINK_PORT: Type.Integer({
    minimum: 1,
    maximum: 65535,
    default: DEFAULT_PORTS.link,
    description:
      "Where link's reference page is served in development (`pnpm start` passes it): a default CORS origin.",
  }),
  HR_PORT: Type.Integer({
    minimum: 1,
    maximum: 65535,
    default: DEFAULT_PORTS.hr,
    description: "Where hr's reference page is served in development (`pnpm start` passes it): a default CORS origin.",
  }),
  DEFAULT_TIME_ZONE: Type.String({
    default: 'Europe/Berlin',
    description: "IANA time zone of the tenants' calendar days (a time entry's default date is today there).",
  }),
  SERVICE_CLIENTS: Type.Optional(
    Type.String({
      description:
        'JSON array of service clients, e.g. `[{"client_id":"link","client_secret":"…","scopes":"read:users ' +
        'write:tickets"}]`: clients of no tenant that name one with `tenant_id` in the token request and get ' +
        'only these scopes (secrets of at least 16 characters, stored hashed).',
    }),
  ),
});

export interface ServiceClientConfig {
  client_id: string;
  client_secret: string;
  scopes: string[];
}

export type DeskConfig = Static<typeof DeskConfigSchema> & {
  serviceClients: ServiceClientConfig[];
  corsOrigins: string[];
  previousPublicKeys: VerificationKey[];
};

const CLIENT_ID = /^[A-Za-z0-9._~-]{3,128}$/;

/** SERVICE_CLIENTS, checked entry by entry so a typo stops the start with the variable's name, never half-applies. */
export function parseServiceClients(raw: string | undefined, problems: string[]): ServiceClientConfig[] {
  if (raw === undefined || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    problems.push('SERVICE_CLIENTS is not valid JSON (expected an array of {client_id, client_secret, scopes})');
    return [];
  }
  if (!Array.isArray(parsed)) {
    problems.push('SERVICE_CLIENTS must be a JSON array of {client_id, client_secret, scopes}');
    return [];
  }
  const clients: ServiceClientConfig[] = [];
  parsed.forEach((entry: unknown, index) => {
    const item = (entry ?? {}) as Record<string, unknown>;
    const where = `SERVICE_CLIENTS[${index}]`;
    if (typeof item.client_id !== 'string' || !CLIENT_ID.test(item.client_id)) {
      problems.push(`${where}.client_id must be 3-128 characters of A-Z a-z 0-9 . _ ~ -`);
      return;
    }
    if (typeof item.client_secret !== 'string' || item.client_secret.length < 16) {
      problems.push(`${where}.client_secret must be a string of at least 16 characters`);
      return;
    }
    const scopes =
      typeof item.scopes === 'string'
        ? [...new Set(parseScope(item.scopes))]
        : Array.isArray(item.scopes)
          ? item.scopes
          : null;
    const unknown = (scopes ?? []).filter(
      (scope) => typeof scope !== 'string' || !(ALL_SCOPES as string[]).includes(scope),
    );
    if (!scopes || scopes.length === 0 || unknown.length) {
      problems.push(
        `${where}.scopes must name known scopes (${ALL_SCOPES.join(' ')})${unknown.length ? `; unknown: ${unknown.join(' ')}` : ''}`,
      );
      return;
    }
    if (clients.some((c) => c.client_id === item.client_id)) {
      problems.push(`${where}.client_id "${item.client_id}" appears twice`);
      return;
    }
    clients.push({ client_id: item.client_id, client_secret: item.client_secret, scopes: scopes as string[] });
  });
  return clients;
}

export function loadDeskConfig(env: NodeJS.ProcessEnv = process.env): DeskConfig {
  const config = loadConfig(DeskConfigSchema, env);
  const problems: string[] = [];
  const serviceClients = parseServiceClients(config.SERVICE_CLIENTS, problems);
  const corsOrigins = parseCorsOrigins(config.CORS_ORIGINS, config.NODE_ENV, problems, {
    desk: config.PORT,
    link: config.LINK_PORT,
    hr: config.HR_PORT,
  });
  const previousPublicKeys = parsePreviousPublicKeys(config.JWT_PREVIOUS_PUBLIC_KEYS, problems);
  if (config.BOOTSTRAP_CLIENT_ID && serviceClients.some((c) => c.client_id === config.BOOTSTRAP_CLIENT_ID)) {
    problems.push('SERVICE_CLIENTS names the BOOTSTRAP_CLIENT_ID; a client is either of a tenant or a service client');
  }
  if (Boolean(config.BOOTSTRAP_CLIENT_ID) !== Boolean(config.BOOTSTRAP_CLIENT_SECRET)) {
    problems.push('BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET must be set together');
  }
  if (config.JWT_PRIVATE_KEY && config.JWT_PRIVATE_KEY_FILE)
    problems.push('set only one of JWT_PRIVATE_KEY and JWT_PRIVATE_KEY_FILE');
  // A generated key would change with every pod and invalidate every other replica's tokens.
  if (config.NODE_ENV === 'production' && !config.JWT_PRIVATE_KEY && !config.JWT_PRIVATE_KEY_FILE) {
    problems.push('JWT_PRIVATE_KEY or JWT_PRIVATE_KEY_FILE is required when NODE_ENV=production');
  }
  if (!isTimeZone(config.DEFAULT_TIME_ZONE))
    problems.push(`DEFAULT_TIME_ZONE "${config.DEFAULT_TIME_ZONE}" is not an IANA time zone (e.g. Europe/Berlin)`);
  problems.push(...allowlistProblems(config.OUTBOUND_ALLOWLIST));
  problems.push(...encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', config.WEBHOOK_ENCRYPTION_KEY, config.NODE_ENV));
  if (problems.length) throw new ConfigError(problems);
  return { ...config, serviceClients, corsOrigins, previousPublicKeys };
}
