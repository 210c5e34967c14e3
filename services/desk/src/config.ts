import { Type, type Static } from '@sinclair/typebox';
import { ConfigError, commonConfigProperties, loadConfig } from '@msp/http';

export const DeskConfigSchema = Type.Object({
  ...commonConfigProperties,
  NODE_ENV: Type.String({ default: 'development' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3001 }),
  DATA_DIR: Type.String({ default: '.data' }),
  JWT_PRIVATE_KEY: Type.Optional(Type.String({ description: 'PEM (PKCS#8 or SEC1/PKCS#1) of an EC P-256 or RSA key.' })),
  JWT_PRIVATE_KEY_FILE: Type.Optional(Type.String()),
  JWT_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  TOKEN_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }),
  REFRESH_TOKEN_TTL_DAYS: Type.Integer({ minimum: 1, maximum: 365, default: 30 }),
  BOOTSTRAP_CLIENT_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._~-]{3,128}$' })),
  BOOTSTRAP_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  BOOTSTRAP_TENANT: Type.String({ default: 'default', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }),
  DEV_CLIENT_FILE: Type.Optional(Type.String()),
});

export type DeskConfig = Static<typeof DeskConfigSchema>;

export function loadDeskConfig(env: NodeJS.ProcessEnv = process.env): DeskConfig {
  const config = loadConfig(DeskConfigSchema, env);
  const problems: string[] = [];
  if (Boolean(config.BOOTSTRAP_CLIENT_ID) !== Boolean(config.BOOTSTRAP_CLIENT_SECRET)) {
    problems.push('BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET must be set together');
  }
  if (config.JWT_PRIVATE_KEY && config.JWT_PRIVATE_KEY_FILE) problems.push('set only one of JWT_PRIVATE_KEY and JWT_PRIVATE_KEY_FILE');
  // A generated key would change with every pod and invalidate every other replica's tokens.
  if (config.NODE_ENV === 'production' && !config.JWT_PRIVATE_KEY && !config.JWT_PRIVATE_KEY_FILE) {
    problems.push('JWT_PRIVATE_KEY or JWT_PRIVATE_KEY_FILE is required when NODE_ENV=production');
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}
