'use strict';
// link's and hr's list cases of `pnpm bench`: each service in a database of its own, seeded with
// SQL, started as production starts it (`node services/<name>/dist/index.js`, NODE_ENV=production,
// its Redis rate limiter, tokens verified against a JWKS), beside its bare baseline
// (baseline-lists.js running the same SQL).
const { randomBytes, randomUUID } = require('node:crypto');
const path = require('node:path');
const {
  ROOT,
  databaseUrlFor,
  forkServer,
  startService,
  stopService,
  verifyingServiceEnv,
  withClient,
} = require('./support');
const { applyMigrations } = require(`${ROOT}/packages/db/dist/index.js`);
const { seedTenant: seedHrTenant } = require('./hr/run');

const MANAGED_TENANTS = Number(process.env.BENCH_LINK_TENANTS ?? 1_000);
const EMPLOYEES = Number(process.env.BENCH_HR_EMPLOYEES ?? 2_000);

/** One managed tenant per row, newest first by created_at, half active, every 5th suspended. */
async function seedLink(client, ownerTenantId) {
  await client.query(
    `INSERT INTO managed_tenants (owner_tenant_id, name, domain, client_id, status, created_at, updated_at)
     SELECT $1, 'Customer ' || n, 'customer-' || n || '.example', gen_random_uuid(),
            CASE WHEN n % 5 = 0 THEN 'suspended' ELSE 'active' END::managed_tenant_status,
            now() - n * interval '1 minute', now() - n * interval '1 minute'
       FROM generate_series(1, $2::int) AS n`,
    [ownerTenantId, MANAGED_TENANTS],
  );
  return `${MANAGED_TENANTS} managed tenants`;
}

async function seedHr(client, tenantId) {
  const sheets = await seedHrTenant(client, tenantId, EMPLOYEES);
  return `${EMPLOYEES} employees, ${sheets} timesheets of October 2026`;
}

const SERVICES = {
  // link needs its key for connector credentials in production (none are used here).
  link: {
    seed: seedLink,
    scope: 'admin:tenant',
    cases: ['/tenants?per_page=25'],
    env: () => ({ CONNECTOR_ENCRYPTION_KEY: randomBytes(32).toString('base64') }),
  },
  hr: { seed: seedHr, scope: 'read:hr', cases: ['/employees?per_page=25', '/timesheets?per_page=25'], env: () => ({}) },
};

/**
 * Creates, migrates and seeds the service's database, starts the service and its baseline. Answers
 * the cases to measure, the pids of the service and its baseline (for their RSS) and `stop()`, which also drops the database.
 */
async function prepareService(name, { serverUrl, redisUrl, issuer }) {
  const spec = SERVICES[name];
  const database = `bench_${name}_${randomBytes(6).toString('hex')}`;
  const databaseUrl = databaseUrlFor(serverUrl, database);
  const admin = (sql) => withClient(serverUrl, (client) => client.query(sql));
  const started = [];
  let service;
  const stop = async () => {
    await stopService(service);
    await Promise.all(
      started.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', resolve);
            child.disconnect();
          }),
      ),
    );
    await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((error) =>
      console.error(`could not drop ${database}: ${error.message}`),
    );
  };
  try {
    await admin(`CREATE DATABASE "${database}"`);
    await applyMigrations(databaseUrl, path.join(ROOT, 'services', name, 'prisma/migrations'));
    const tenantId = randomUUID();
    const began = Date.now();
    const seeded = await withClient(databaseUrl, async (client) => {
      const what = await spec.seed(client, tenantId);
      await client.query('VACUUM ANALYZE');
      return what;
    });
    console.log(`${name}: seeded ${seeded} in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    service = await startService(name, {
      ...verifyingServiceEnv({ databaseUrl, redisUrl, issuer }),
      LOG_LEVEL: 'info',
      ...spec.env(),
    });
    const baseline = await forkServer('baseline-lists.js', {
      BENCH_BASELINE: JSON.stringify({ service: name, databaseUrl, tenantId }),
    });
    started.push(baseline.child);
    const headers = {
      authorization: `Bearer ${issuer.token({ tenant_id: tenantId, scope: spec.scope, sub: `bench-${name}` }, { expiresInSec: 4 * 3600 })}`,
    };
    const cases = spec.cases.map((route) => ({
      name: `GET ${route}`,
      service: name,
      serviceUrl: `${service.url}/api/v1${route}`,
      baselineUrl: `${baseline.url}/api/v1${route}`,
      headers,
    }));
    return { cases, pid: service.child.pid, baselinePid: baseline.child.pid, seeded, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

module.exports = { prepareService, SERVICES };
