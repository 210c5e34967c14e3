import { Type, type Static } from '@sinclair/typebox';
import { commonConfigProperties, loadConfig } from '@msp/http';

export const HrConfigSchema = Type.Object({
  ...commonConfigProperties,
  NODE_ENV: Type.String({ default: 'development' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3003 }),
  DATA_DIR: Type.String({ default: '.data' }),
});

export type HrConfig = Static<typeof HrConfigSchema>;

export function loadHrConfig(env: NodeJS.ProcessEnv = process.env): HrConfig {
  return loadConfig(HrConfigSchema, env);
}
