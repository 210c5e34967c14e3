import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@msp/db';
import { createLogger, type Logger } from '@msp/http';
import { recordConformance, type ConformanceRecorder } from './openapi-conformance';
import { connectedRedis, uniquePrefix } from './redis';
import { startTestIssuer, type TestIssuer } from './test-issuer';

/** What every token-verifying service (link, hr) takes from its test start-up. */
export interface VerifierTestSettings {
  issuer: string;
  audience: string;
  jwksUrl: string;
  rateLimitPerMinute: number;
  rateLimitPrefix: string;
}

export interface ServiceTestDeps<Db> {
  db: Db;
  databaseUrl: string;
  redis: Redis;
  logger: Logger;
  issuer: TestIssuer;
  settings: VerifierTestSettings;
}

export interface ServiceUnderTest<Db> {
  app: http.RequestListener;
  db: Db;
  databaseUrl: string;
  redis: Redis;
  /** desk's stand-in: signs tokens and serves the JWKS the service verifies them with. */
  issuer: TestIssuer;
  /** A token of a fresh tenant (unless `tenant_id` is given) with the service's default scope, or the claims given. */
  token(claims?: Record<string, unknown>, options?: Parameters<TestIssuer['token']>[1]): string;
  /**
   * Another instance of the service on the same database: its own Prisma client, Redis connection
   * and, given `isolated`, its own copy of every module (nothing in memory shared, as between two
   * processes). Closed with the service.
   */
  replica(): Promise<http.RequestListener>;
  close(): Promise<void>;
}

export interface StartServiceOptions<Db> {
  service: string;
  migrationsDir: string;
  createDb(databaseUrl: string): Db & { $disconnect(): Promise<void> };
  /** The scope of `token()` when the claims name none. */
  defaultScope: string;
  /** Builds the app; services with more dependencies (a queue, a key) add them here. */
  createApp(
    deps: ServiceTestDeps<Db>,
  ):
    | { app: http.RequestListener; close?(): Promise<void> }
    | Promise<{ app: http.RequestListener; close?(): Promise<void> }>;
  /** Point the app at this database instead of a fresh migrated one (e.g. one that does not exist). */
  databaseUrl?: string;
  /** `createDb` and `createApp` from a fresh copy of the service's modules (jest.isolateModules), for `replica()`. */
  isolated?(): Pick<StartServiceOptions<Db>, 'createDb' | 'createApp'>;
  /**
   * Check every answer of `app` (and of each replica) against the OpenAPI document the service
   * serves (recordConformance); with checkConformanceAfterEachTest in the suite's jest setup, a
   * test that receives an undocumented answer fails. `close()` throws what no test has reported.
   */
  conformance?: boolean;
}

/**
 * A service as it runs in production, in-process: its own fresh database, real Redis for the rate
 * limiter (under a prefix of its own), and real ES256 tokens verified through a JWKS over HTTP.
 */
export async function startServiceUnderTest<Db>(options: StartServiceOptions<Db>): Promise<ServiceUnderTest<Db>> {
  // A given database belongs to the caller: it is neither migrated nor dropped here.
  const database: TestDatabase | undefined = options.databaseUrl
    ? undefined
    : await createTestDatabase({ migrationsDir: options.migrationsDir });
  const databaseUrl = options.databaseUrl ?? database!.url;
  const db = options.createDb(databaseUrl);
  const logger = createLogger({ service: options.service, level: 'error' });
  const redis = await connectedRedis(logger);
  const issuer = await startTestIssuer();
  const settings: VerifierTestSettings = {
    issuer: issuer.issuer,
    audience: issuer.audience,
    jwksUrl: issuer.jwksUrl,
    rateLimitPerMinute: 600,
    rateLimitPrefix: uniquePrefix(options.service),
  };
  const started = await options.createApp({ db, databaseUrl, redis, issuer, logger, settings });
  const replicas: (() => Promise<void>)[] = [];
  const recorders: ConformanceRecorder[] = [];
  const checked = async (app: http.RequestListener) => {
    if (!options.conformance) return app;
    const recorder = await recordConformance(app);
    recorders.push(recorder);
    return recorder.app;
  };
  const app = await checked(started.app);

  return {
    app,
    db,
    databaseUrl,
    redis,
    issuer,
    token: (claims = {}, tokenOptions) =>
      issuer.token({ tenant_id: randomUUID(), scope: options.defaultScope, ...claims }, tokenOptions),
    async replica() {
      const modules = options.isolated?.() ?? options;
      const replicaDb = modules.createDb(databaseUrl);
      const replicaRedis = await connectedRedis(logger);
      const replica = await modules.createApp({
        db: replicaDb,
        databaseUrl,
        redis: replicaRedis,
        issuer,
        logger,
        settings,
      });
      replicas.push(async () => {
        await replica.close?.();
        await replicaDb.$disconnect();
        await replicaRedis.quit();
      });
      return checked(replica.app);
    },
    async close() {
      for (const close of replicas) await close();
      await started.close?.();
      await db.$disconnect();
      await redis.quit();
      await issuer.close();
      await database?.drop();
      // Answers no test's afterEach has reported (a hook's requests, a late response) fail the suite here.
      const unreported = recorders.flatMap((recorder) => {
        recorder.dispose();
        return recorder.takeViolations();
      });
      if (unreported.length > 0)
        throw new Error(
          `${unreported.length} response(s) do not match the served OpenAPI document:\n${unreported.join('\n\n')}`,
        );
    },
  };
}
