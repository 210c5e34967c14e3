import { Type, type Static } from '@sinclair/typebox';
import { eventsRetentionConfigProperties } from '@msp/events';
import { ConfigError, commonConfigProperties, exportIdleTimeoutConfigProperties, loadConfig } from '@msp/http';
import { allowlistProblems } from '@msp/outbound';
import { EXPORT_DEFAULTS } from './exports/payroll-export.repository';
import { encryptionKeyProblems } from '@msp/secrets';

export const HrConfigSchema = Type.Object({
  ...commonConfigProperties,
  ...eventsRetentionConfigProperties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3003, description: 'Port the HTTP server listens on.' }),
  DATA_DIR: Type.String({
    default: '.data',
    description:
      "Folder of local state: the keys a service generates outside production (desk's signing key, the " +
      'encryption keys).',
  }),
  // The payroll exports stream from the service's pool, which holds this many connections more than
  // the API's requests need, so exports cannot take the API's connections.
  EXPORT_POOL_SIZE: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: EXPORT_DEFAULTS.poolSize,
    description: 'Database connections kept for the payroll export: the exports that stream at once per instance.',
  }),
  ...exportIdleTimeoutConfigProperties,
  EXPORT_POOL_ACQUIRE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    default: EXPORT_DEFAULTS.acquireTimeoutMs,
    description:
      'A payroll export that gets none of those connections within this (ms) answers 503 with `Retry-After`.',
  }),
});

export type HrConfig = Static<typeof HrConfigSchema>;

export function loadHrConfig(env: NodeJS.ProcessEnv = process.env): HrConfig {
  const config = loadConfig(HrConfigSchema, env);
  const problems = [
    ...allowlistProblems(config.OUTBOUND_ALLOWLIST),
    ...encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', config.WEBHOOK_ENCRYPTION_KEY, config.NODE_ENV),
  ];
  if (problems.length) throw new ConfigError(problems);
  return config;
}
