'use strict';
// `pnpm bench:link:ad`: link's sync of an Active Directory against a bare ldapts client. A real
// Samba AD DC (Debian's samba, started by @msp/peers in a network namespace of its own) holds
// BENCH_AD_USERS users (a manager each, departments, titles) and BENCH_AD_GROUPS groups, loaded
// offline; the built link, as production starts it, syncs it through an `ldap` connector over LDAPS.
//   full   repeated full syncs, nothing changed (FULL_SYNC_INTERVAL_HOURS so small that every
//          sync is full), alternating with a bare client reading the same users and groups with
//          the same paged searches (RFC 2696, link's page size): target ≤ 1.3× the bare client;
//   delta  repeated delta syncs, nothing changed (uSNChanged above the last run's highest
//          committed USN), alternating with the bare client asking the same question: ≤ 1.1×.
// link's time is its run's started_at → finished_at. RSS: link's peak during the full syncs, at
// BENCH_AD_USERS and at a tenth of it (flat within 20 MB). Writes bench/results/<date>-link-ad.json
// and bench/results/latest-link-ad.md. Environment (optional): BENCH_DATABASE_URL, BENCH_REDIS_URL,
// BENCH_AD_USERS (3000), BENCH_AD_GROUPS (200), BENCH_RUNS (3), BENCH_DELTA_RUNS (7), BENCH_STRICT=1.
const { randomBytes, randomUUID } = require('node:crypto');
const { mkdirSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const {
  apiCall,
  ROOT,
  round,
  median,
  databaseUrlFor,
  withClient,
  startService,
  stopService,
  verifyingServiceEnv,
  memory,
  resetPeak,
  machine,
  describeMachine,
} = require('../support');
const LINK = path.join(ROOT, 'services/link');
const { applyMigrations } = require(`${ROOT}/packages/db/dist/index.js`);
const { startTestIssuer } = require(`${ROOT}/packages/testkit/dist/index.js`);
const { startSambaDc, adDirectory } = require(`${ROOT}/packages/peers/dist/index.js`);
const { Client: LdapClient } = require(require.resolve('ldapts', { paths: [LINK] }));
// The bare client reads the same pages as link does.
const { LDAP_PAGE_SIZE } = require(`${LINK}/dist/ldap/ldap-directory.js`);

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const USERS = Number(process.env.BENCH_AD_USERS ?? 3000);
const GROUPS = Number(process.env.BENCH_AD_GROUPS ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DELTA_RUNS = Number(process.env.BENCH_DELTA_RUNS ?? 7);
const TARGET = { full: 1.3, delta: 1.1, rssGrowthMb: 20 };
const RESULTS = path.join(ROOT, 'bench/results');
const USER_FILTER = '(&(objectCategory=person)(objectClass=user))';
const GROUP_FILTER = '(objectClass=group)';
// What link's AD flavour reads of a user (services/link/src/ldap/ldap-directory.ts).
const USER_ATTRIBUTES = [
  'objectGUID',
  'sAMAccountName',
  'mail',
  'displayName',
  'cn',
  'givenName',
  'sn',
  'userAccountControl',
  'memberOf',
  'department',
  'manager',
];

/** What link reads of the directory, read by ldapts alone: every page of users, then of groups. */
async function bareRead(dc, usersOu, groupsOu, changed = '') {
  const client = new LdapClient({ url: dc.url, tlsOptions: { ca: [dc.caCertificatePem] } });
  const began = process.hrtime.bigint();
  await client.bind(dc.adminDn, dc.adminPassword);
  let users = 0;
  let groups = 0;
  try {
    await client.search('', { scope: 'base', attributes: ['currentTime', 'highestCommittedUSN', 'dsServiceName'] });
    const userFilter = changed ? `(&${USER_FILTER}${changed})` : USER_FILTER;
    const groupFilter = changed ? `(&${GROUP_FILTER}${changed})` : GROUP_FILTER;
    const paged = { paged: { pageSize: LDAP_PAGE_SIZE }, explicitBufferAttributes: ['objectGUID'] };
    for await (const page of client.searchPaginated(usersOu, {
      scope: 'sub',
      filter: userFilter,
      attributes: USER_ATTRIBUTES,
      ...paged,
    })) {
      users += page.searchEntries.length;
    }
    const groupAttributes = ['objectGUID', 'cn', 'member'];
    for await (const page of client.searchPaginated(groupsOu, {
      scope: 'sub',
      filter: groupFilter,
      attributes: groupAttributes,
      ...paged,
    })) {
      groups += page.searchEntries.length;
    }
  } finally {
    await client.unbind();
  }
  return { ms: Number(process.hrtime.bigint() - began) / 1e6, users, groups };
}

async function highestUsn(dc) {
  const client = await dc.connect();
  try {
    const { searchEntries } = await client.search('', { scope: 'base', attributes: ['highestCommittedUSN'] });
    return String(searchEntries[0].highestCommittedUSN);
  } finally {
    await client.unbind();
  }
}

const api = (link, authorization, method, urlPath, body) => apiCall(link, { authorization }, method, urlPath, body);

/** One sync, waited for in PostgreSQL (not through link's API, which would share its event loop). */
async function syncOnce(link, authorization, connectorId, db) {
  const run = await api(link, authorization, 'POST', `/connectors/${connectorId}/sync`);
  for (;;) {
    const { rows } = await db.query('SELECT status FROM sync_runs WHERE id = $1', [run.id]);
    if (rows[0]?.status === 'succeeded' || rows[0]?.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const done = await api(link, authorization, 'GET', `/connectors/${connectorId}/syncs/${run.id}`);
  if (done.status === 'failed') throw new Error(`sync failed: ${done.error}`);
  return { ms: Date.parse(done.finished_at) - Date.parse(done.started_at), mode: done.stats.mode, stats: done.stats };
}

/** link started on `databaseUrl`, allowed to reach the DC's namespace; `env` on top. */
function startLink(databaseUrl, issuer, dc, env) {
  return startService('link', {
    ...verifyingServiceEnv({ databaseUrl, redisUrl: REDIS_URL, issuer }),
    CONNECTOR_ENCRYPTION_KEY: CONNECTOR_KEY,
    OUTBOUND_ALLOWED_NETWORKS: dc.subnet,
    OUTBOUND_TIMEOUT_MS: '30000',
    LOG_LEVEL: 'warn',
    ...env,
  });
}
const CONNECTOR_KEY = randomBytes(32).toString('base64');

/** Runs the full and delta cases against a DC of `users` users; returns their figures. */
async function measure(users, issuer, { runs, deltaRuns }) {
  const directory = adDirectory({ baseDn: 'DC=corp,DC=example', mailDomain: 'corp.example', users, groups: GROUPS });
  const dc = await startSambaDc({ seed: directory.entries });
  const name = `bench_link_ad_${randomBytes(6).toString('hex')}`;
  await withClient(SERVER_URL, (client) => client.query(`CREATE DATABASE ${name}`));
  const databaseUrl = databaseUrlFor(SERVER_URL, name);
  const db = new Client({ connectionString: databaseUrl });
  db.on('error', () => undefined);
  let link;
  try {
    await applyMigrations(databaseUrl, path.join(LINK, 'prisma/migrations'));
    await db.connect();
    const authorization = `Bearer ${issuer.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;
    // Every sync full: the interval (in hours) shorter than the time between two syncs.
    link = await startLink(databaseUrl, issuer, dc, { FULL_SYNC_INTERVAL_HOURS: '0.00001' });
    const tenant = await api(link, authorization, 'POST', '/tenants', {
      name: 'Corp',
      domain: 'corp.example',
      client_id: randomUUID(),
    });
    const connector = await api(link, authorization, 'POST', '/connectors', {
      tenant_id: tenant.id,
      type: 'ldap',
      name: 'Corp AD',
      config: {
        flavor: 'active_directory',
        url: dc.url,
        bind_dn: dc.adminDn,
        bind_password: dc.adminPassword,
        base_dn: dc.baseDn,
        users_ou: directory.usersOu,
        groups_base: directory.groupsOu,
        ca_certificate: dc.caCertificatePem,
      },
    });
    const first = await syncOnce(link, authorization, connector.id, db);
    const full = { link: [], bare: [] };
    resetPeak(link.child.pid);
    for (let i = 0; i < runs; i++) {
      full.link.push((await syncOnce(link, authorization, connector.id, db)).ms);
      full.bare.push((await bareRead(dc, directory.usersOu, directory.groupsOu)).ms);
    }
    const fullPeak = memory(link.child.pid).hwm_mb;
    await stopService(link);
    link = await startLink(databaseUrl, issuer, dc, {});
    const delta = { link: [], bare: [], modes: [] };
    for (let i = 0; i < deltaRuns; i++) {
      const usn = await highestUsn(dc);
      const run = await syncOnce(link, authorization, connector.id, db);
      delta.link.push(run.ms);
      delta.modes.push(run.mode);
      delta.bare.push(
        (await bareRead(dc, directory.usersOu, directory.groupsOu, `(uSNChanged>=${BigInt(usn) + 1n})`)).ms,
      );
    }
    return {
      users,
      first_sync_ms: first.ms,
      first_stats: first.stats,
      full: {
        link_ms: median(full.link),
        bare_ms: round(median(full.bare)),
        ratio: round(median(full.link) / median(full.bare), 2),
        peak_rss_mb: round(fullPeak, 1),
      },
      delta: {
        link_ms: median(delta.link),
        bare_ms: round(median(delta.bare)),
        ratio: round(median(delta.link) / median(delta.bare), 2),
        modes: delta.modes,
      },
    };
  } finally {
    await stopService(link);
    await db.end().catch(() => undefined);
    await dc.stop();
    await withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(
      () => undefined,
    );
  }
}

async function main() {
  const issuer = await startTestIssuer();
  try {
    const small = await measure(Math.max(100, Math.round(USERS / 10)), issuer, { runs: 1, deltaRuns: 1 });
    const large = await measure(USERS, issuer, { runs: RUNS, deltaRuns: DELTA_RUNS });
    const growth = large.full.peak_rss_mb - small.full.peak_rss_mb;
    const postgres = await withClient(
      SERVER_URL,
      async (client) => `PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}`,
    );
    const report = {
      date: new Date().toISOString(),
      machine: machine(postgres),
      settings: { users: USERS, groups: GROUPS, runs: RUNS, delta_runs: DELTA_RUNS },
      small,
      large,
      rss_growth_mb: round(growth, 1),
      targets: {
        ...TARGET,
        met: large.full.ratio <= TARGET.full && large.delta.ratio <= TARGET.delta && growth <= TARGET.rssGrowthMb,
      },
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(
      path.join(RESULTS, `${report.date.slice(0, 10)}-link-ad.json`),
      `${JSON.stringify(report, null, 2)}\n`,
    );
    const md = [
      `# pnpm bench:link:ad (${report.date.slice(0, 10)})`,
      '',
      describeMachine(report.machine),
      '',
      `A Samba AD DC of ${USERS.toLocaleString('en')} users and ${GROUPS} groups; link syncs it over LDAPS, a bare ldapts client reads the same pages.`,
      '',
      '| case (nothing changed) | link ms (started_at → finished_at) | bare ldapts ms | ratio (target) | link peak RSS MB |',
      '| --- | ---: | ---: | --- | ---: |',
      `| first sync (empty mirror) | ${large.first_sync_ms} | | | |`,
      `| full sync, median of ${RUNS} | ${large.full.link_ms} | ${large.full.bare_ms} | ×${large.full.ratio} (≤ ${TARGET.full}) | ${large.full.peak_rss_mb} |`,
      `| delta sync, median of ${DELTA_RUNS} | ${large.delta.link_ms} | ${large.delta.bare_ms} | ×${large.delta.ratio} (≤ ${TARGET.delta}) | |`,
      '',
      `Peak RSS during full syncs: ${small.full.peak_rss_mb} MB at ${small.users} users, ${large.full.peak_rss_mb} MB at ${USERS} (growth ${report.rss_growth_mb} MB, target ≤ ${TARGET.rssGrowthMb}). Delta modes: ${large.delta.modes.join(', ')}.`,
      '',
    ].join('\n');
    writeFileSync(path.join(RESULTS, 'latest-link-ad.md'), md);
    console.log(md);
    if (process.env.BENCH_STRICT === '1' && !report.targets.met) process.exitCode = 1;
  } finally {
    await issuer.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
