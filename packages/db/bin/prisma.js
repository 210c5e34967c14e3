#!/usr/bin/env node
'use strict';
// Runs the project's pinned Prisma CLI with the WebAssembly schema engine stand-in
// (bin/schema-engine.js), so that `generate`, `migrate *` and `db *` work with no download from
// Prisma's servers. Arguments, stdio and the exit code pass through unchanged.

const path = require('node:path');
const { spawn } = require('node:child_process');

const cli = require.resolve('prisma/build/index.js');
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: path.join(__dirname, 'schema-engine.js'),
  // The update check calls Prisma's servers; offline it only adds a wait.
  CHECKPOINT_DISABLE: process.env.CHECKPOINT_DISABLE ?? '1',
  PRISMA_HIDE_UPDATE_MESSAGE: process.env.PRISMA_HIDE_UPDATE_MESSAGE ?? '1',
};

const args = process.argv.slice(2);
const child = spawn(process.execPath, [cli, ...args], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) return process.kill(process.pid, signal);
  process.exit(code ?? 1);
});
