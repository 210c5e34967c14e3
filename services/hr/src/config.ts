import { Type, type Static } from '@sinclair/typebox';
import { eventsRetentionConfigProperties } from '@msp/events';
import { ConfigError, commonConfigProperties, exportIdleTimeoutConfigProperties, loadConfig } from '@msp/http';
import { allowlistProblems } from '@msp/outbound';
import { EXPORT_DEFAULTS } from './exports/payroll-export.repository';
import { encryptionKeyProblems } from '@msp/secrets';

export const HrConfigSchema = Type.Object({
  ...commonConfigProperties,
  ...eventsRetentionConfigProperties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3003 }),
  DATA_DIR: Type.String({ default: '.data' }),
  // The payroll export: its pool's connections (exports at once per instance); a response whose reader
  // takes no byte for this long is ended (its cursor and connection freed); an export that waits this
  // long for a connection of its pool answers 503.
  EXPORT_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 100, default: EXPORT_DEFAULTS.poolSize }),
  ...exportIdleTimeoutConfigProperties,
  EXPORT_POOL_ACQUIRE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: EXPORT_DEFAULTS.acquireTimeoutMs }),
});

export type HrConfig = Static<typeof HrConfigSchema>;

export function loadHrConfig(env: NodeJS.ProcessEnv = process.env): HrConfig {
  const config = loadConfig(HrConfigSchema, env);
  const problems = [...allowlistProblems(config.OUTBOUND_ALLOWLIST), ...encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', config.WEBHOOK_ENCRYPTION_KEY, config.NODE_ENV)];
  if (problems.length) throw new ConfigError(problems);
  return config;
}
