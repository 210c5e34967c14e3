import type { Redis } from 'ioredis';
import { createAuth, registerWhoAmI, remoteJwks, SCOPES } from '@msp/auth';
import { createServiceApp, type Logger } from '@msp/http';
import type { Db } from './db';
import { createEmployeesRepository } from './employees/employees.repository';
import { registerEmployeeRoutes } from './employees/employees.routes';
import { createEmployeesService } from './employees/employees.service';

export interface HrSettings {
  /** desk's issuer and audience, and where its public keys are (SPEC §3). */
  issuer: string;
  audience: string;
  jwksUrl: string;
  /**
   * Least time between two JWKS fetches caused by unknown `kid`s; @msp/auth's default (30 s)
   * when unset. Tests shorten it to see a rotation without waiting.
   */
  jwksRefetchCooldownMs?: number;
  rateLimitPerMinute: number;
  bodyLimit?: string;
  trustProxy?: string;
  /** Redis key prefix of the rate limiter (tests isolate themselves with it). */
  rateLimitPrefix?: string;
}

export interface HrDeps {
  db: Db;
  redis?: Redis;
  logger: Logger;
  settings: HrSettings;
}

export function createHrApp({ db, redis, logger, settings }: HrDeps) {
  // hr verifies desk's tokens against desk's JWKS: cached, refetched once for a new kid.
  const auth = createAuth({
    issuer: settings.issuer,
    audience: settings.audience,
    keys: remoteJwks({ url: settings.jwksUrl, refetchCooldownMs: settings.jwksRefetchCooldownMs }),
  });
  const employees = createEmployeesService(createEmployeesRepository(db));

  return createServiceApp({
    service: 'hr',
    logger,
    openapi: {
      title: 'HR API (hr)',
      version: '1.0.0',
      description:
        'Employees (a helpdesk user with the number the payroll software knows them by); timesheets, leaves and the payroll export build on them.\n' +
        'Reading needs `read:hr`, recording and changing `write:hr`; `admin:tenant` satisfies both.',
      tokenUrl: `${settings.issuer}/auth/token`,
      scopes: SCOPES,
      tags: [
        { name: 'Employees', description: 'People on the payroll, linked to helpdesk users.' },
        { name: 'Authentication', description: 'How this service sees your access token.' },
      ],
    },
    readinessChecks: {
      database: () => db.$queryRaw`SELECT 1`,
    },
    rateLimit: { limit: settings.rateLimitPerMinute, redis, prefix: settings.rateLimitPrefix },
    authenticate: auth.authenticate,
    requireScope: auth.requireScope,
    bodyLimit: settings.bodyLimit,
    trustProxy: settings.trustProxy,
    routes: (api) => {
      registerEmployeeRoutes(api, { employees });
      registerWhoAmI(api);
    },
  });
}
