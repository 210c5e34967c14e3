// desk, link and hr as `pnpm start` runs them: the built services (dist/) started by the
// launcher (@msp/devstack), each on a fresh database of its own. The generator reads the OpenAPI
// documents they serve from it, and the tests drive the SDK against it.
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { createDevstack, findFreePort, findRepoRoot, readDevstackConfig } = require('@msp/devstack');

const SERVICE_NAMES = /** @type {const} */ (['desk', 'link', 'hr']);

/**
 * The issuer the documents name in their token URL: `pnpm start`'s desk, whatever port this
 * stack's desk has, so the generated documents do not change with the port a run got.
 */
const DOCUMENTED_ISSUER = 'http://localhost:3001/api/v1';

/**
 * @typedef {'desk' | 'link' | 'hr'} ServiceName
 * @typedef {{
 *   baseUrls: Record<ServiceName, string>,
 *   devClient: { client_id: string, client_secret: string, tenant: string },
 *   documents(): Promise<Record<ServiceName, Record<string, unknown>>>,
 *   stop(): Promise<void>,
 * }} RunningStack
 */

/** @param {string} serverUrl @param {string} database */
function databaseUrl(serverUrl, database) {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** @param {string} serverUrl @param {string[]} databases */
async function dropDatabases(serverUrl, databases) {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    for (const name of databases)
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * Starts the three built services on the PostgreSQL server the tests use (TEST_DATABASE_URL), on
 * free ports, without Redis. `stop()` stops them and drops their databases.
 * @returns {Promise<RunningStack>}
 */
async function startStack() {
  const serverUrl = process.env.TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-sdk-'));
  const prefix = `sdk_${randomBytes(4).toString('hex')}`;
  const databases = SERVICE_NAMES.map((name) => `${prefix}_${name}`);
  /** @type {Record<string, string | undefined>} */
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DEVSTACK_DATA_DIR: dataRoot,
    DEVSTACK_LOG_FORMAT: 'json',
    NO_COLOR: '1',
    LOG_LEVEL: 'warn',
    AUTH_ISSUER: DOCUMENTED_ISSUER,
    DESK_PORT: String(await findFreePort()),
    LINK_PORT: String(await findFreePort()),
    HR_PORT: String(await findFreePort()),
    DESK_DATABASE_URL: databaseUrl(serverUrl, databases[0]),
    LINK_DATABASE_URL: databaseUrl(serverUrl, databases[1]),
    HR_DATABASE_URL: databaseUrl(serverUrl, databases[2]),
  };
  /** @type {string[]} */
  const lines = [];
  const devstack = createDevstack(readDevstackConfig(env, findRepoRoot()), { write: (line) => lines.push(line), env });
  const exited = devstack.run();
  const cleanUp = async () => {
    await exited;
    fs.rmSync(dataRoot, { recursive: true, force: true });
    await dropDatabases(serverUrl, databases);
  };
  const ready = await devstack.ready;
  if (!ready?.devClient) {
    devstack.stop('start failed');
    // What stopped the start is the error to report, not a failure to clean up after it.
    await cleanUp().catch(() => undefined);
    throw new Error(`the services did not start:\n${lines.join('\n')}`);
  }
  // The launcher names `localhost`, which may resolve to ::1 first; the services listen on 127.0.0.1.
  const baseUrls = /** @type {Record<ServiceName, string>} */ (
    Object.fromEntries(
      SERVICE_NAMES.map((name) => [name, ready.baseUrls[name].replace('//localhost:', '//127.0.0.1:')]),
    )
  );
  return {
    baseUrls,
    devClient: ready.devClient,
    async documents() {
      const entries = await Promise.all(
        SERVICE_NAMES.map(async (name) => {
          const response = await fetch(`${baseUrls[name]}/openapi.json`);
          if (!response.ok) throw new Error(`${name} answered ${response.status} for its OpenAPI document`);
          return [name, await response.json()];
        }),
      );
      return Object.fromEntries(entries);
    },
    async stop() {
      devstack.stop('done');
      await cleanUp();
    },
  };
}

module.exports = { startStack, SERVICE_NAMES };
