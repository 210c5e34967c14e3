import { Type, type Static } from '@sinclair/typebox';
import { eventsRetentionConfigProperties } from '@msp/events';
import { commonConfigProperties, ConfigError, loadConfig } from '@msp/http';
import { allowlistProblems } from '@msp/outbound';
import { encryptionKeyProblems } from '@msp/secrets';

export const LinkConfigSchema = Type.Object({
  ...commonConfigProperties,
  ...eventsRetentionConfigProperties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3002 }),
  DATA_DIR: Type.String({ default: '.data' }),
  // link's own credential at desk (a desk service client): onboarding and offboarding read desk
  // users and write tickets with it, never with the caller's token (runs outlive the request).
  DESK_API_URL: Type.String({ default: 'http://localhost:3001/api/v1', pattern: '^https?://' }),
  DESK_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  DESK_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  // Connector secrets at rest (AES-256-GCM): 32 random bytes, base64. Required in production;
  // elsewhere link keeps one of its own under DATA_DIR/link/connector-encryption.key.
  // Checked below rather than by a pattern, so a malformed key is never echoed in the message.
  CONNECTOR_ENCRYPTION_KEY: Type.Optional(Type.String()),
  // Every enabled connector is synchronised this often (minutes; fractions allowed).
  SYNC_INTERVAL_MINUTES: Type.Number({ exclusiveMinimum: 0, default: 60 }),
  // Between full syncs, a directory that filters gets deltas; a full sync (which notices
  // deletions) at least this often (hours; fractions allowed).
  FULL_SYNC_INTERVAL_HOURS: Type.Number({ exclusiveMinimum: 0, default: 24 }),
});

export type LinkConfig = Static<typeof LinkConfigSchema>;

export function loadLinkConfig(env: NodeJS.ProcessEnv = process.env): LinkConfig {
  const config = loadConfig(LinkConfigSchema, env);
  const problems = [
    ...encryptionKeyProblems('CONNECTOR_ENCRYPTION_KEY', config.CONNECTOR_ENCRYPTION_KEY, config.NODE_ENV),
    ...encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', config.WEBHOOK_ENCRYPTION_KEY, config.NODE_ENV),
  ];
  problems.push(...allowlistProblems(config.OUTBOUND_ALLOWLIST));
  if (problems.length) throw new ConfigError(problems);
  return config;
}
