import { configProblems } from '@msp/testkit';
import { loadDeskConfig } from '../src/config';

const BASE = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/desk' };

const problemsOf = (env: NodeJS.ProcessEnv) => configProblems(loadDeskConfig, env);

describe('desk configuration', () => {
  test('When only DATABASE_URL is set, then every other setting has its documented default', () => {
    expect(loadDeskConfig(BASE)).toMatchObject({
      PORT: 3001,
      HOST: '0.0.0.0',
      RATE_LIMIT_PER_MINUTE: 600,
      TOKEN_RATE_LIMIT_PER_MINUTE: 30,
      AUTH_ISSUER: 'http://localhost:3001/api/v1',
      AUTH_AUDIENCE: 'msp-api',
      BOOTSTRAP_TENANT: 'default',
      SHUTDOWN_TIMEOUT_MS: 10000,
      SLA_SWEEP_INTERVAL_MS: 15000,
      DEFAULT_TIME_ZONE: 'Europe/Berlin',
    });
  });

  test('When SLA_SWEEP_INTERVAL_MS is set, then it is taken; outside 100–60000 the start is refused naming it', () => {
    expect(loadDeskConfig({ ...BASE, SLA_SWEEP_INTERVAL_MS: '250' }).SLA_SWEEP_INTERVAL_MS).toBe(250);
    expect(problemsOf({ ...BASE, SLA_SWEEP_INTERVAL_MS: '5' }).join()).toMatch(/^SLA_SWEEP_INTERVAL_MS /);
    expect(problemsOf({ ...BASE, SLA_SWEEP_INTERVAL_MS: '120000' }).join()).toMatch(/^SLA_SWEEP_INTERVAL_MS /);
  });

  test('When DEFAULT_TIME_ZONE is no IANA time zone, then the start is refused naming it', () => {
    expect(problemsOf({ ...BASE, DEFAULT_TIME_ZONE: 'Mars/Olympus' })).toEqual([
      'DEFAULT_TIME_ZONE "Mars/Olympus" is not an IANA time zone (e.g. Europe/Berlin)',
    ]);
    expect(problemsOf({ ...BASE, DEFAULT_TIME_ZONE: 'America/New_York' })).toEqual([]);
  });

  test('When DATABASE_URL is missing, then the start is refused naming it', () => {
    expect(problemsOf({})).toEqual(['DATABASE_URL is required']);
  });

  test('When a value is malformed, then the problem names the variable and the value', () => {
    expect(problemsOf({ ...BASE, PORT: 'eighty' }).join()).toMatch(/^PORT .*"eighty"/);
    expect(problemsOf({ ...BASE, REDIS_URL: 'localhost:6379' }).join()).toMatch(/^REDIS_URL /);
  });

  test('When only one bootstrap credential is set, or production has no signing key, then the start is refused', () => {
    expect(problemsOf({ ...BASE, BOOTSTRAP_CLIENT_ID: 'ops-client' })).toEqual([
      'BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET must be set together',
    ]);
    expect(problemsOf({ ...BASE, NODE_ENV: 'production' })).toEqual([
      'JWT_PRIVATE_KEY or JWT_PRIVATE_KEY_FILE is required when NODE_ENV=production',
      'WEBHOOK_ENCRYPTION_KEY is required when NODE_ENV=production (32 random bytes, base64: `openssl rand -base64 32`)',
    ]);
  });
});
