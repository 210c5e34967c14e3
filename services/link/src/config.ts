import { Type, type Static } from '@sinclair/typebox';
import { commonConfigProperties, loadConfig } from '@msp/http';

export const LinkConfigSchema = Type.Object({
  ...commonConfigProperties,
  NODE_ENV: Type.String({ default: 'development' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3002 }),
  DATA_DIR: Type.String({ default: '.data' }),
});

export type LinkConfig = Static<typeof LinkConfigSchema>;

export function loadLinkConfig(env: NodeJS.ProcessEnv = process.env): LinkConfig {
  return loadConfig(LinkConfigSchema, env);
}
