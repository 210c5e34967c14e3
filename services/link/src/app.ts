import type { Redis } from 'ioredis';
import { createAuth, registerWhoAmI, remoteJwks, SCOPES } from '@msp/auth';
import { createServiceApp, type Logger } from '@msp/http';
import type { Db } from './db';
import { createTenantsRepository } from './tenants/tenants.repository';
import { registerTenantRoutes } from './tenants/tenants.routes';
import { createTenantsService } from './tenants/tenants.service';

export interface LinkSettings {
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

export interface LinkDeps {
  db: Db;
  redis?: Redis;
  logger: Logger;
  settings: LinkSettings;
}

export function createLinkApp({ db, redis, logger, settings }: LinkDeps) {
  // link verifies desk's tokens against desk's JWKS: cached, refetched once for a new kid.
  const auth = createAuth({
    issuer: settings.issuer,
    audience: settings.audience,
    keys: remoteJwks({ url: settings.jwksUrl, refetchCooldownMs: settings.jwksRefetchCooldownMs }),
  });
  const tenants = createTenantsService(createTenantsRepository(db));

  return createServiceApp({
    service: 'link',
    logger,
    openapi: {
      title: 'Integration API (link)',
      version: '1.0.0',
      description:
        'The customer directories (managed tenants: a client\'s Microsoft 365 or Google Workspace tenant) that your tenant administers; ' +
        'connectors, synchronisations, onboarding and offboarding build on them.\n' +
        'Every endpoint needs scope `admin:tenant`.',
      tokenUrl: `${settings.issuer}/auth/token`,
      scopes: SCOPES,
      tags: [
        { name: 'Tenants', description: 'Customer directories administered by your tenant.' },
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
      registerTenantRoutes(api, { tenants });
      registerWhoAmI(api);
    },
  });
}
