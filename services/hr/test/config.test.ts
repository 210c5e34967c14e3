import { configProblems } from '@msp/testkit';
import { loadHrConfig } from '../src/config';

const BASE = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/hr' };

const problemsOf = (env: NodeJS.ProcessEnv) => configProblems(loadHrConfig, env);

describe('hr configuration', () => {
  test("When the export's pool and timeouts are not set, then they have their documented defaults", () => {
    expect(loadHrConfig(BASE)).toMatchObject({
      EXPORT_POOL_SIZE: 10,
      EXPORT_IDLE_TIMEOUT_MS: 30000,
      EXPORT_POOL_ACQUIRE_TIMEOUT_MS: 5000,
    });
  });

  test("When the export's pool and timeouts are set, then they are taken as numbers", () => {
    expect(
      loadHrConfig({
        ...BASE,
        EXPORT_POOL_SIZE: '20',
        EXPORT_IDLE_TIMEOUT_MS: '60000',
        EXPORT_POOL_ACQUIRE_TIMEOUT_MS: '2000',
      }),
    ).toMatchObject({
      EXPORT_POOL_SIZE: 20,
      EXPORT_IDLE_TIMEOUT_MS: 60000,
      EXPORT_POOL_ACQUIRE_TIMEOUT_MS: 2000,
    });
  });

  test.each([
    ['EXPORT_POOL_SIZE', '0'],
    ['EXPORT_POOL_SIZE', '1000'],
    ['EXPORT_IDLE_TIMEOUT_MS', 'soon'],
    ['EXPORT_IDLE_TIMEOUT_MS', '0'],
    ['EXPORT_POOL_ACQUIRE_TIMEOUT_MS', '-1'],
    ['EXPORT_POOL_ACQUIRE_TIMEOUT_MS', '1.5'],
  ])('When %s is "%s", then the start is refused naming it and the value', (name, value) => {
    const problems = problemsOf({ ...BASE, [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name} .*"${value.replace('.', '\\.')}"`));
  });
});
