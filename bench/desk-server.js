'use strict';
// desk as it runs in production (the built dist/ app: auth, rate limit, validation, its database,
// served by @msp/http's startServer), started by run.js in a process of its own. It creates the
// benchmark's API clients, listens on a free port and reports both to its parent over IPC.
const path = require('node:path');
const { randomBytes } = require('node:crypto');

const DESK = path.resolve(__dirname, '../services/desk');
const fromDesk = (id) => require(require.resolve(id, { paths: [DESK] }));
const { createLogger, createRedis, startServer } = fromDesk('@msp/http');
const { freePort } = require('./support');
const { createDeskApp } = require(`${DESK}/dist/app.js`);
const { createSecretBox } = fromDesk('@msp/secrets');
const { createDb } = require(`${DESK}/dist/db.js`);
const { generateSigningKey } = require(`${DESK}/dist/auth/signing-key.js`);
const { ensureApiClient } = require(`${DESK}/dist/auth/bootstrap.js`);
const { createApiClientsRepository } = require(`${DESK}/dist/auth/api-clients.repository.js`);

async function main() {
  const { databaseUrl, redisUrl, rateLimitPerMinute, logLevel, tenants } = JSON.parse(process.env.BENCH_DESK);
  const logger = createLogger({ service: 'desk', level: logLevel });
  const database = createDb(databaseUrl);
  // createDb answers Kysely over the pool (`{ db, reads, … }`); a side-by-side run may start an older
  // checkout's desk, whose createDb answered a Prisma client the app took as `db`.
  const current = 'reads' in database;
  const redis = redisUrl ? createRedis(redisUrl, logger) : undefined;
  // The issuer names the address, so the port is chosen before the app exists.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const { app } = createDeskApp({
    ...(current ? { database } : { db: database }),
    // Webhooks are not part of these measurements: a key of this run only.
    webhookSecrets: createSecretBox(randomBytes(32)),
    redis,
    logger,
    signingKey: generateSigningKey(),
    settings: {
      issuer: `${url}/api/v1`,
      audience: 'msp-api',
      rateLimitPerMinute,
      tokenRateLimitPerMinute: 1000,
      refreshTokenTtlDays: 30,
      rateLimitPrefix: `rl:bench:${randomBytes(4).toString('hex')}:`,
    },
  });
  await startServer({ app, port, host: '127.0.0.1', logger });

  const clients = createApiClientsRepository(current ? database.db : database);
  const credentials = {};
  for (const tenant of tenants) {
    const clientId = `bench-${tenant}-${randomBytes(4).toString('hex')}`;
    const secret = randomBytes(24).toString('base64url');
    const { tenantId } = await ensureApiClient(clients, { tenant, clientId, secret, name: 'benchmark' });
    credentials[tenant] = { tenantId, clientId, secret };
  }
  process.send({ url, credentials });
  process.on('disconnect', () => process.exit(0));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
