import { ConfigError } from '@msp/http';

/** What a service's configuration loader refuses `env` for, as it would name it at start; none when it loads. */
export function configProblems(load: (env: NodeJS.ProcessEnv) => unknown, env: NodeJS.ProcessEnv): string[] {
  try {
    load(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
