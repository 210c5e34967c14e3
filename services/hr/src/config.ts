import { Type, type Static } from '@sinclair/typebox';
import { ConfigError, commonConfigProperties, loadConfig } from '@msp/http';
import { allowlistProblems } from '@msp/outbound';
import { encryptionKeyProblems } from '@msp/secrets';

export const HrConfigSchema = Type.Object({
  ...commonConfigProperties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3003 }),
  DATA_DIR: Type.String({ default: '.data' }),
});

export type HrConfig = Static<typeof HrConfigSchema>;

export function loadHrConfig(env: NodeJS.ProcessEnv = process.env): HrConfig {
  const config = loadConfig(HrConfigSchema, env);
  const problems = [...allowlistProblems(config.OUTBOUND_ALLOWLIST), ...encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', config.WEBHOOK_ENCRYPTION_KEY, config.NODE_ENV)];
  if (problems.length) throw new ConfigError(problems);
  return config;
}
