#!/usr/bin/env node
'use strict';
// A stand-in for Prisma's native `schema-engine` binary, built on the same engine compiled to
// WebAssembly (@prisma/schema-engine-wasm) and reaching PostgreSQL through @prisma/adapter-pg.
// The Prisma CLI downloads the native binary from Prisma's servers, which air-gapped machines
// cannot reach; `bin/prisma.js` points PRISMA_SCHEMA_ENGINE_BINARY here instead.
//
// It speaks the binary's protocol, as the pinned CLI (prisma 7.10.1) expects it:
//   schema-engine --version
//   schema-engine --datasource '{"url":…}' cli can-connect-to-database|create-database|drop-database
//   schema-engine --datamodels <file>… --datasource '{"url":…,"shadowDatabaseUrl"?:…}'
//     then line-delimited JSON-RPC 2.0 on stdin/stdout until stdin closes.
// It rests on internal APIs of pinned versions: test/schema-engine.test.ts must keep passing
// whenever one of prisma, @prisma/* or this file changes.

const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { randomUUID } = require('node:crypto');
const pg = require('pg');

const WASM_PACKAGE = '@prisma/schema-engine-wasm';
const ADAPTER_NAME = '@prisma/adapter-pg';

// ---------------------------------------------------------------------------------------------
// Arguments

function parseArgs(argv) {
  const args = { datamodels: [], datasource: {}, cliCommand: null, version: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--version' || arg === '-V') args.version = true;
    else if (arg === '--datamodels') args.datamodels.push(argv[++i]);
    else if (arg === '--datasource') args.datasource = JSON.parse(argv[++i] || '{}');
    else if (arg === 'cli') args.cliCommand = argv[++i];
    // --enabled-preview-features and --extension-types carry a value the wasm engine does not use.
    else if (arg.startsWith('--')) i++;
  }
  return args;
}

// ---------------------------------------------------------------------------------------------
// Logging: the CLI reads stderr as JSON lines and keeps the last ERROR's fields as the reason.

function logLine(level, fields) {
  process.stderr.write(
    JSON.stringify({ timestamp: new Date().toISOString(), level, fields, target: 'schema_engine::logger' }) + '\n',
  );
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL helpers

function quoteIdent(name) {
  return '"' + String(name).replace(/"/g, '""') + '"';
}

function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = '/' + encodeURIComponent(database);
  return parsed.toString();
}

function databaseOf(url) {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  return name || 'postgres';
}

function hostOf(url) {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}`;
}

// adapter-pg 7.10.1 cannot describe PostgreSQL's internal one-byte type `"char"` (OID 18), which
// the engine's introspection reads from pg_catalog (relkind, contype, …). pg already returns its
// value as a string, so announcing the column as text (OID 25) is enough.
function charColumnsAsText(result) {
  for (const res of Array.isArray(result) ? result : [result]) {
    for (const field of (res && res.fields) || []) {
      if (field.dataTypeID === 18) field.dataTypeID = 25;
    }
  }
  return result;
}

class CharAsTextClient extends pg.Client {
  query(config, values, callback) {
    const cb = typeof values === 'function' ? values : typeof callback === 'function' ? callback : null;
    if (cb) {
      const wrapped = (err, res) => cb(err, err ? res : charColumnsAsText(res));
      return typeof values === 'function' ? super.query(config, wrapped) : super.query(config, values, wrapped);
    }
    const returned = super.query(config, values);
    return returned && typeof returned.then === 'function' ? returned.then(charColumnsAsText) : returned;
  }
}

async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

// A connection to the server for CREATE/DROP DATABASE, which cannot run in the database they
// act on: the `postgres` maintenance database, else `template1`, else the URL's own database.
async function withServerClient(url, fn) {
  const candidates = ['postgres', 'template1'].map((name) => withDatabase(url, name)).concat(url);
  let client;
  let lastError;
  for (const candidate of candidates) {
    client = new pg.Client({ connectionString: candidate });
    try {
      await client.connect();
      lastError = null;
      break;
    } catch (error) {
      lastError = error;
      await client.end().catch(() => {});
      // Only a missing database or a refused one is worth another candidate.
      if (!['3D000', '42501', '28000'].includes(error && error.code)) break;
    }
  }
  if (lastError) throw lastError;
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// The driver adapter factory handed to the wasm engine

function createAdapterFactory(datasource) {
  const { PrismaPg } = require('@prisma/adapter-pg');
  const { bindMigrationAwareSqlAdapterFactory } = require('@prisma/driver-adapter-utils');
  const shadowDatabases = new Map(); // name -> closes its pool; dropped after each request at the latest

  async function connectTo(url) {
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema') || undefined;
    const pool = new pg.Pool({ connectionString: url, Client: CharAsTextClient });
    // An idle connection the server ends (a shadow database dropped WITH (FORCE), a restart)
    // emits 'error' on the pool; unhandled, that would end the process with no reason given.
    pool.on('error', (error) => logLine('WARN', { message: `idle connection lost: ${error.message}` }));
    const adapter = await new PrismaPg(pool, { schema, disposeExternalPool: true }).connect();
    // adapter-pg splits scripts on every `;`, which breaks function bodies and string literals.
    // The native engine sends a migration as one simple-protocol query; so does this.
    adapter.executeScript = async (script) => {
      try {
        await pool.query(script);
      } catch (error) {
        adapter.onError(error);
      }
    };
    return adapter;
  }

  function mainUrl() {
    if (!datasource.url) {
      throw new Error('No datasource url: set `datasource.url` in prisma.config.ts (for example from DATABASE_URL).');
    }
    return datasource.url;
  }

  async function dropShadowDatabase(name) {
    const closePool = shadowDatabases.get(name);
    shadowDatabases.delete(name);
    if (closePool) await closePool().catch(() => {});
    await withServerClient(mainUrl(), (client) =>
      client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
    );
  }

  // adapter-pg's own shadow helper ignores the database name when given a connection string (it
  // would run the shadow migrations in the main database), so the shadow database is made here.
  async function connectToShadowDb() {
    if (datasource.shadowDatabaseUrl) return connectTo(datasource.shadowDatabaseUrl);
    // Named after the main database, so that a leftover (a killed process) says where it came from.
    const name = `prisma_shadow_${databaseOf(mainUrl()).slice(0, 32)}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await withServerClient(mainUrl(), (client) => client.query(`CREATE DATABASE ${quoteIdent(name)}`));
    let adapter;
    try {
      adapter = await connectTo(withDatabase(mainUrl(), name));
    } catch (error) {
      await withServerClient(mainUrl(), (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
      ).catch(() => {});
      throw error;
    }
    shadowDatabases.set(name, adapter.dispose.bind(adapter));
    adapter.dispose = () => dropShadowDatabase(name);
    return adapter;
  }

  const factory = bindMigrationAwareSqlAdapterFactory({
    provider: 'postgres',
    adapterName: ADAPTER_NAME,
    connect: () => connectTo(mainUrl()),
    connectToShadowDb,
  });

  async function dropLeftoverShadowDatabases() {
    for (const name of [...shadowDatabases.keys()]) await dropShadowDatabase(name).catch(() => {});
  }

  return { factory, dropLeftoverShadowDatabases };
}

// ---------------------------------------------------------------------------------------------
// The wasm engine

async function loadWasmModule() {
  const gluePath = require.resolve(`${WASM_PACKAGE}/schema_engine_bg`);
  const glue = await import(require('node:url').pathToFileURL(gluePath).href);
  const bytes = fs.readFileSync(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
  // The engine's panic hook reports its message through this global before trapping.
  global.PRISMA_WASM_PANIC_REGISTRY = {
    message: '',
    set_message(message) {
      this.message = message;
    },
  };
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  return glue;
}

function readDatamodels(files) {
  return files.map((file) => [file, fs.readFileSync(file, 'utf8')]);
}

// The engine's git hash, the last part of the package version, as the native binary reports it.
function wasmVersion() {
  const gluePath = require.resolve(`${WASM_PACKAGE}/schema_engine_bg`);
  const manifest = JSON.parse(fs.readFileSync(path.join(path.dirname(gluePath), 'package.json'), 'utf8'));
  return manifest.version.split('.').pop();
}

// ---------------------------------------------------------------------------------------------
// One-shot commands: `cli can-connect-to-database|create-database|drop-database`

const ONE_SHOT_COMMANDS = {
  'can-connect-to-database': (url) => withClient(url, (client) => client.query('SELECT 1')),
  'create-database': (url) =>
    withServerClient(url, (client) => client.query(`CREATE DATABASE ${quoteIdent(databaseOf(url))}`)),
  'drop-database': (url) =>
    withServerClient(url, (client) => client.query(`DROP DATABASE ${quoteIdent(databaseOf(url))}`)),
};

// The error codes the CLI acts on (P1003 makes `migrate dev` create the database).
function userFacingError(error, url) {
  const database = databaseOf(url);
  switch (error && error.code) {
    case '3D000':
      return {
        error_code: 'P1003',
        message: `Database \`${database}\` does not exist on the database server at \`${hostOf(url)}\`.`,
      };
    case '42P04':
      return {
        error_code: 'P1009',
        message: `Database \`${database}\` already exists on the database server at \`${hostOf(url)}\``,
      };
    case '28P01':
    case '28000':
      return {
        error_code: 'P1000',
        message: `Authentication failed against database server at \`${hostOf(url)}\`, the provided database credentials are not valid.`,
      };
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return { error_code: 'P1001', message: `Can't reach database server at \`${hostOf(url)}\`` };
    default:
      return { message: (error && error.message) || String(error) };
  }
}

async function runOneShot(command, datasource) {
  // The CLI skips the first stderr line (the native binary's start-up log) before parsing.
  logLine('INFO', { message: 'Starting schema engine CLI (wasm stand-in)', git_hash: wasmVersion() });
  const run = ONE_SHOT_COMMANDS[command];
  if (!run) {
    logLine('ERROR', { message: `Unknown cli command: ${command}` });
    return 1;
  }
  if (!datasource.url) {
    logLine('ERROR', { message: 'No datasource url was given (--datasource).' });
    return 1;
  }
  try {
    await run(datasource.url);
    return 0;
  } catch (error) {
    logLine('ERROR', userFacingError(error, datasource.url));
    return 1;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC server

function rpcError(error) {
  const registry = global.PRISMA_WASM_PANIC_REGISTRY;
  const isPanic = error instanceof WebAssembly.RuntimeError;
  const message = isPanic ? (registry && registry.message) || String(error) : (error && error.message) || String(error);
  return {
    code: 4466,
    message: 'An error happened. Check the data field for details.',
    data: {
      is_panic: isPanic,
      message,
      meta: (error && error.meta) || null,
      error_code: (error && error.code) || null,
    },
  };
}

async function serve(args) {
  const glue = await loadWasmModule();
  const { factory, dropLeftoverShadowDatabases } = createAdapterFactory(args.datasource);
  const enginePromise = glue.SchemaEngine.new(
    { datamodels: args.datamodels.length ? readDatamodels(args.datamodels) : undefined },
    (line) => process.stderr.write(String(line).trimEnd() + '\n'),
    factory,
  );
  enginePromise.catch(() => {}); // reported to the first request instead

  let nextOutgoingId = 1;
  const pendingOutgoing = new Map();
  const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');

  // The native engine does not return `diff` output: it asks the CLI to print it first.
  function askCliToPrint(content) {
    const id = nextOutgoingId++;
    return new Promise((resolve) => {
      pendingOutgoing.set(id, resolve);
      send({ jsonrpc: '2.0', id, method: 'print', params: { content } });
    });
  }

  const handlers = {
    async diff(engine, params) {
      const result = await engine.diff(params);
      if (typeof result.stdout === 'string') await askCliToPrint(result.stdout);
      return { exitCode: result.exitCode, stdout: null };
    },
    evaluateDataLoss: (engine, params) =>
      withMigrationSchemaCache(engine, params, () => engine.evaluateDataLoss(params)),
    createMigration: (engine, params) => withMigrationSchemaCache(engine, params, () => engine.createMigration(params)),
    getDatabaseVersion: (engine, params) => engine.version(params || null),
    async createDatabase(_engine, params) {
      const url = (params && params.datasource && params.datasource.url) || args.datasource.url;
      await ONE_SHOT_COMMANDS['create-database'](url);
      return { databaseName: databaseOf(url) };
    },
  };

  // `evaluateDataLoss` and `createMigration` take the schema the migrations build from a cache
  // that `devDiagnostic` fills; on a miss the wasm engine has no way to make a shadow database
  // and fails ("PostgreSQL shadow DB must be provided through an external factory"). The cache
  // is keyed by the migrations applied to the dev database, so `migrate dev` misses whenever it
  // has just applied pending migrations. Diagnosing the history again, now that they are
  // applied, fills the cache through the adapter factory, and the retry hits it.
  async function withMigrationSchemaCache(engine, params, call) {
    try {
      return await call();
    } catch (error) {
      if (!/shadow DB must be provided through an external factory/.test(String(error && error.message))) throw error;
      await engine.diagnoseMigrationHistory({
        migrationsList: params.migrationsList,
        optInToShadowDatabase: true,
        filters: params.filters,
      });
      return call();
    }
  }

  async function handleRequest(request) {
    const engine = await enginePromise;
    const handler = handlers[request.method];
    if (handler) return handler(engine, request.params);
    if (typeof engine[request.method] !== 'function' || request.method === 'free' || request.method === 'constructor') {
      throw Object.assign(new Error(`Method not found: ${request.method}`), { rpcCode: -32601 });
    }
    return engine[request.method](request.params === undefined ? {} : request.params);
  }

  // Requests run one at a time, like the native engine's, so a shadow database can be dropped
  // between them without pulling it from under another request.
  let queue = Promise.resolve();
  let panicked = false;
  function enqueue(request) {
    queue = queue.then(async () => {
      let response;
      try {
        const result = await handleRequest(request);
        response = { jsonrpc: '2.0', id: request.id, result: result === undefined ? null : result };
      } catch (error) {
        panicked = panicked || error instanceof WebAssembly.RuntimeError;
        response =
          error && error.rpcCode
            ? { jsonrpc: '2.0', id: request.id, error: { code: error.rpcCode, message: error.message } }
            : { jsonrpc: '2.0', id: request.id, error: rpcError(error) };
      }
      await dropLeftoverShadowDatabases();
      send(response);
      // A trapped wasm instance cannot be trusted with another request.
      if (panicked) await shutdown(101);
    });
  }

  let shuttingDown = false;
  async function shutdown(code) {
    if (shuttingDown) return;
    shuttingDown = true;
    exitCodeOnceDone = code;
    await dropLeftoverShadowDatabases().catch(() => {});
    // The engine leaves timers and pools open: leave explicitly once stdout is flushed.
    process.stdout.write('', () => process.exit(code));
  }

  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    if (message.method !== undefined) enqueue(message);
    else if (pendingOutgoing.has(message.id)) {
      pendingOutgoing.get(message.id)(message);
      pendingOutgoing.delete(message.id);
    }
  });
  lines.on('close', () => queue.then(() => shutdown(0)));
  process.on('SIGTERM', () => shutdown(0));
  process.on('SIGINT', () => shutdown(130));
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.version) {
    process.stdout.write(`schema-engine-cli ${wasmVersion()}\n`);
    return;
  }
  if (args.cliCommand) {
    process.exitCode = await runOneShot(args.cliCommand, args.datasource);
    return;
  }
  await serve(args);
}

// Set once every answer has gone out and the process is only closing down (stdin closed).
let exitCodeOnceDone = null;

// Anything thrown outside a request is still reported the way the CLI reads a reason: as an
// ERROR line, instead of Node's bare stack trace, which the CLI would not show. While closing
// down after the last answer, the wasm engine's own timers can still fire into an engine whose
// connections are gone and trap ("unreachable"): the work was done and answered, so that is a
// warning and the process ends with the code it was ending with.
for (const event of ['uncaughtException', 'unhandledRejection']) {
  process.on(event, (error) => {
    const message = `${event}: ${(error && error.stack) || String(error)}`;
    if (exitCodeOnceDone !== null) {
      logLine('WARN', { message: `while closing down: ${message}` });
      process.stdout.write('', () => process.exit(exitCodeOnceDone));
      return;
    }
    logLine('ERROR', { message });
    process.exit(1);
  });
}

main().catch((error) => {
  logLine('ERROR', { message: (error && error.stack) || String(error) });
  process.exit(1);
});
