#!/usr/bin/env node
// `pnpm generate` (turbo's `generate` task of @msp/sdk): starts the built desk, link and hr, reads
// the OpenAPI document each serves, and writes src/generated from them. Needs the services built
// (turbo builds them first) and the PostgreSQL server the tests use (TEST_DATABASE_URL).
const fs = require('node:fs');
const path = require('node:path');
const { startStack } = require('./stack');
const { GENERATED_DIR, generatedFiles } = require('./generated-files');

async function main() {
  const stack = await startStack();
  let documents;
  try {
    documents = await stack.documents();
  } finally {
    await stack.stop();
  }
  const files = await generatedFiles(documents);
  fs.rmSync(GENERATED_DIR, { recursive: true, force: true });
  fs.mkdirSync(GENERATED_DIR, { recursive: true });
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(GENERATED_DIR, name), content);
  console.log(`wrote ${Object.keys(files).sort().join(', ')} to ${path.relative(process.cwd(), GENERATED_DIR)}`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
