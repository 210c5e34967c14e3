'use strict';
// `node bench/start-rss.js`: each service's RSS right after start, as production starts it (the
// images' Node and flags, NODE_ENV=production, its own database, Redis), and where it is (smaps:
// V8's pages, the node binary's pages, arenas). `BENCH_STARTS` starts each that many times (default
// 2), one at a time, 5 s after /readyz; `BENCH_START_ONLY` (desk, link or hr) starts that one alone.
// Prints; writes nothing. Compare with the memory target in docs/performance.md.
const { generateKeyPairSync, randomBytes } = require('node:crypto');
const {
  ROOT,
  databaseUrlFor,
  describeMemoryParts,
  memory,
  memoryParts,
  round,
  startService,
  stopService,
  verifyingServiceEnv,
  withClient,
} = require('./support');
const { startTestIssuer } = require(`${ROOT}/packages/testkit/dist/index.js`);

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const STARTS = Number(process.env.BENCH_STARTS ?? 2);
const ONLY = process.env.BENCH_START_ONLY;
const SETTLE_MS = 5000;

const envOf = {
  desk: (databaseUrl) => ({
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    // Production wants desk's signing key from the environment: a fresh one.
    JWT_PRIVATE_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }),
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    BOOTSTRAP_CLIENT_ID: 'bench',
    BOOTSTRAP_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    BOOTSTRAP_TENANT: 'bench',
    SERVICE_CLIENTS: JSON.stringify([
      { client_id: 'link-bench', client_secret: randomBytes(24).toString('base64url'), scopes: ['read:users'] },
    ]),
    LOG_LEVEL: 'info',
  }),
  link: (databaseUrl, issuer) => ({
    ...verifyingServiceEnv({ databaseUrl, redisUrl: REDIS_URL, issuer }),
    CONNECTOR_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'info',
  }),
  hr: (databaseUrl, issuer) => ({
    ...verifyingServiceEnv({ databaseUrl, redisUrl: REDIS_URL, issuer }),
    LOG_LEVEL: 'info',
  }),
};

async function main() {
  const issuer = await startTestIssuer();
  try {
    for (const service of Object.keys(envOf).filter((s) => !ONLY || s === ONLY)) {
      for (let start = 0; start < STARTS; start++) {
        const name = `bench_start_${randomBytes(6).toString('hex')}`;
        await withClient(SERVER_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
        let running;
        try {
          running = await startService(service, envOf[service](databaseUrlFor(SERVER_URL, name), issuer));
          await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
          const pid = running.child.pid;
          console.log(
            `${service}: RSS ${round(memory(pid).rss_mb, 1)} MB 5 s after /readyz (${describeMemoryParts(memoryParts(pid))} MB)`,
          );
        } finally {
          if (running) await stopService(running);
          await withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
        }
      }
    }
  } finally {
    await issuer.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
