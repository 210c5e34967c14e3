import type { Redis } from 'ioredis';
import { advisoryResourceLock, rawSqlOverKysely } from '@msp/db';
import { sql } from 'kysely';
import { createAuth, registerWhoAmI, remoteJwks, SCOPES } from '@msp/auth';
import { createLeases, createServiceApp, type Logger } from '@msp/http';
import { createdUnderClaim, createServiceEvents, type DispatcherOptions } from '@msp/events';
import { createOutbound, type Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import { hrEvents } from './events/hr-events';
import type { HrDatabase } from './db';
import { employeeJson } from './employees/employee.mapper';
import { createEmployeesRepository } from './employees/employees.repository';
import { registerEmployeeRoutes } from './employees/employees.routes';
import { createEmployeesService } from './employees/employees.service';
import { createContractsRepository } from './contracts/contracts.repository';
import { registerContractRoutes } from './contracts/contracts.routes';
import { createContractsService } from './contracts/contracts.service';
import { createLeaveAccountsRepository } from './leave-accounts/leave-accounts.repository';
import { registerLeaveAccountRoutes } from './leave-accounts/leave-accounts.routes';
import { createLeaveAccountsService } from './leave-accounts/leave-accounts.service';
import { createLeaveSettingsRepository } from './leave-settings/leave-settings.repository';
import { registerLeaveSettingsRoutes } from './leave-settings/leave-settings.routes';
import { createLeaveSettingsService } from './leave-settings/leave-settings.service';
import { createLeavesRepository } from './leaves/leaves.repository';
import { registerLeaveRoutes } from './leaves/leaves.routes';
import { createLeavesService } from './leaves/leaves.service';
import { createTimesheetsRepository } from './timesheets/timesheets.repository';
import { registerTimesheetRoutes } from './timesheets/timesheets.routes';
import { createTimesheetsService } from './timesheets/timesheets.service';
import { createTimeAccountsRepository } from './time-accounts/time-accounts.repository';
import { registerTimeAccountRoutes } from './time-accounts/time-accounts.routes';
import { createTimeAccountsService } from './time-accounts/time-accounts.service';
import { createWorkingTimeRepository } from './working-time/working-time.repository';
import { registerWorkingTimeRoutes } from './working-time/working-time.routes';
import { createWorkingTimeService } from './working-time/working-time.service';
import { createPayrollExportRepository, EXPORT_DEFAULTS } from './exports/payroll-export.repository';
import { registerPayrollExportRoutes } from './exports/payroll-export.routes';
import { createPayrollExportService } from './exports/payroll-export.service';
import { createPayrollSettingsRepository } from './payroll/payroll-settings.repository';
import { registerPayrollSettingsRoutes } from './payroll/payroll-settings.routes';
import { createPayrollSettingsService } from './payroll/payroll-settings.service';

export interface HrSettings {
  /** desk's issuer and audience, and where its public keys are: hr trusts desk's tokens only. */
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
  /** Origins whose pages may call the API from a browser (API_CORS_ORIGINS). */
  corsOrigins?: string[];
  /** Redis key prefix of the rate limiter (tests isolate themselves with it). */
  rateLimitPrefix?: string;
  /**
   * The payroll exports streaming at once per instance and how long one waits for its turn, its idle timeout (EXPORT_POOL_SIZE,
   * EXPORT_POOL_ACQUIRE_TIMEOUT_MS, EXPORT_IDLE_TIMEOUT_MS), and the Redis key prefix of its per-tenant leases (tests isolate themselves with it).
   */
  exports?: { poolSize?: number; acquireTimeoutMs?: number; idleTimeoutMs?: number; leasePrefix?: string };
  /** The webhook dispatcher's pace (WEBHOOK_CONCURRENCY; tests shorten the retry schedule). */
  webhooks?: Pick<DispatcherOptions, 'concurrency' | 'pollMs' | 'retryDelaysMs' | 'disableAfterMs'>;
  /** EVENTS_RETENTION_DAYS and EVENTS_RETENTION_INTERVAL_MS: the events retention sweep (none without it). */
  eventsRetention?: { days: number; intervalMs: number };
}

export interface HrDeps {
  /** hr's database (createDb), its pool sized for the exports of `settings.exports.poolSize`. */
  database: HrDatabase;
  redis?: Redis;
  logger: Logger;
  /** Calls to webhook endpoints; outside production by default (no address refused). */
  outbound?: Outbound;
  /** Seals and opens webhook signing secrets (webhookSecretsFromConfig: WEBHOOK_ENCRYPTION_KEY). */
  webhookSecrets: SecretBox;
  settings: HrSettings;
}

/** The app, and the webhook dispatcher and the events retention sweep (start them with the service, stop them on shutdown). */
export function createHrApp({ database, redis, logger, outbound, webhookSecrets, settings }: HrDeps) {
  // List pages and the payroll export read `reads` (the replica with DATABASE_READ_URL); the rest, and every write, `db`.
  const { db, reads } = database;
  // hr verifies desk's tokens against desk's JWKS: cached, refetched once for a new kid.
  const auth = createAuth({
    issuer: settings.issuer,
    audience: settings.audience,
    keys: remoteJwks({ url: settings.jwksUrl, refetchCooldownMs: settings.jwksRefetchCooldownMs }),
  });
  const employeesRepository = createEmployeesRepository(db, reads);
  const employees = createEmployeesService(employeesRepository);
  const contractsRepository = createContractsRepository(db, reads);
  const timesheets = createTimesheetsService({
    timesheets: createTimesheetsRepository(db, reads),
    employees: employeesRepository,
    contracts: contractsRepository,
  });
  const contracts = createContractsService({ contracts: contractsRepository, employees: employeesRepository });
  const timeAccounts = createTimeAccountsService({
    accounts: createTimeAccountsRepository(db),
    contracts: contractsRepository,
    employees: employeesRepository,
  });
  const workingTime = createWorkingTimeService({
    records: createWorkingTimeRepository(db),
    employees: employeesRepository,
  });
  const leaveSettingsRepository = createLeaveSettingsRepository(db);
  const leaveSettings = createLeaveSettingsService(leaveSettingsRepository);
  const leaveAccounts = createLeaveAccountsService({
    accounts: createLeaveAccountsRepository(db),
    contracts: contractsRepository,
    employees: employeesRepository,
    settings: leaveSettingsRepository,
  });
  const leaves = createLeavesService({
    leaves: createLeavesRepository(db, reads),
    employees: employeesRepository,
    contracts: contractsRepository,
    accounts: leaveAccounts,
  });
  const payrollSettingsRepository = createPayrollSettingsRepository(db);
  const payrollSettings = createPayrollSettingsService(payrollSettingsRepository);
  const exportSettings = { ...EXPORT_DEFAULTS, ...settings.exports };
  const exportRepository = createPayrollExportRepository(reads, exportSettings);
  const payrollExports = createPayrollExportService({
    settings: payrollSettingsRepository,
    exports: exportRepository,
    // One export per tenant across every instance (Redis); per instance without REDIS_URL.
    leases: createLeases({ redis, prefix: exportSettings.leasePrefix ?? 'hr:export-lease:', logger }),
  });

  const events = createServiceEvents({
    // @msp/events still reads and writes through the raw-SQL surface; over the same pool.
    db: rawSqlOverKysely(db),
    logger,
    catalogue: hrEvents,
    outbound: outbound ?? createOutbound(),
    secrets: webhookSecrets,
    dispatcher: settings.webhooks,
    retention: settings.eventsRetention,
    // An employee records no event: its row keeps the claim of the request that created it.
    createdWithoutEvents: {
      employee: createdUnderClaim((claim) => employeesRepository.findByIdempotencyClaim(claim), employeeJson),
    },
  });

  const service = createServiceApp({
    service: 'hr',
    logger,
    effectOfIdempotencyClaim: events.effectOfClaim,
    openapi: {
      title: 'HR API (hr)',
      version: '1.0.0',
      description:
        'Employees (a helpdesk user with the number the payroll software knows them by); timesheets, leaves and the payroll export build on them.\n' +
        'Reading needs `read:hr`, recording and changing `write:hr`; `admin:tenant` satisfies both.',
      tokenUrl: `${settings.issuer}/auth/token`,
      scopes: SCOPES,
      tags: [
        {
          name: 'Employees',
          description: 'People on the payroll, linked to helpdesk users; their employment and contract history.',
        },
        {
          name: 'Timesheets',
          description: 'Working days under German working-time law (ArbZG §3 daily maximum, §4 breaks).',
        },
        {
          name: 'Leaves',
          description:
            'Absences (vacation, sick, unpaid, parental, special) and their approval; leave accounts under the Bundesurlaubsgesetz (§3 minimum, §4 waiting ' +
            'period, §5 partial entitlement, §7 (3) carry-over, §9 sickness during vacation) and their settings.',
        },
        { name: 'Payroll', description: 'The monthly payroll export (CSV and DATEV LODAS) and its settings.' },
        ...events.tags,
        { name: 'Authentication', description: 'How this service sees your access token.' },
      ],
      webhooks: events.webhookDocs,
    },
    readinessChecks: {
      database: () => sql`SELECT 1`.execute(db),
    },
    // Reported, not gating: without the replica only the lists and the export fail, with a 503.
    optionalReadinessChecks: reads === db ? {} : { database_reads: () => database.readPool.query('SELECT 1') },
    rateLimit: { limit: settings.rateLimitPerMinute, redis, prefix: settings.rateLimitPrefix },
    // Every instance takes the same lock for a write to one resource: If-Match holds across replicas.
    resourceLock: advisoryResourceLock(database.pool),
    authenticate: auth.authenticate,
    requireScope: auth.requireScope,
    bodyLimit: settings.bodyLimit,
    trustProxy: settings.trustProxy,
    corsOrigins: settings.corsOrigins,
    routes: (api) => {
      registerEmployeeRoutes(api, { employees });
      registerTimesheetRoutes(api, { timesheets });
      registerContractRoutes(api, { contracts });
      registerTimeAccountRoutes(api, { accounts: timeAccounts });
      registerWorkingTimeRoutes(api, { workingTime, logger });
      registerLeaveRoutes(api, { leaves });
      registerLeaveAccountRoutes(api, { accounts: leaveAccounts });
      registerLeaveSettingsRoutes(api, { settings: leaveSettings });
      registerPayrollSettingsRoutes(api, { settings: payrollSettings });
      registerPayrollExportRoutes(api, {
        exports: payrollExports,
        logger,
        idleTimeoutMs: exportSettings.idleTimeoutMs,
      });
      events.registerRoutes(api);
      registerWhoAmI(api);
    },
  });
  return { ...service, dispatcher: events.dispatcher, eventsRetention: events.retention };
}
