'use strict';
// After `msp-prisma generate`: the generated client's loader of Prisma's WebAssembly query compiler
// reads the compiler's base64 file itself instead of `import()`ing it.
//
// Through `import()` Node's module loader keeps that module for the life of the process: its 2.3 MB
// source (as an external string, for the ESM view of a CommonJS module) and the 2.3 MB base64
// literal it exports, both only needed once, to compile the module at the first query. On the
// images' Node a bare process holds 15.4 MB more RSS after compiling the compiler that way, 7.3 MB
// more after reading the file (bench/README.md, "Memory").

const fs = require('node:fs');
const path = require('node:path');

const IMPORT = /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/query_compiler_\w+_bg\.\w+\.wasm-base64\.js)"\)/;
const MARK = 'msp-prisma: read, not imported';

/** The client's `internal/class.ts` text with the compiler read from its file; throws when Prisma's loader is not the one expected. */
function patchClientText(text, file = 'internal/class.ts') {
  if (text.includes(MARK)) return text;
  const found = IMPORT.exec(text);
  if (!found) {
    throw new Error(`${file}: Prisma's loader of its query compiler (const { wasm } = await import("…wasm-base64.js")) was not found; after a Prisma upgrade, adapt packages/db/bin/generated-client-patch.js`);
  }
  // The file is `const wasm = "<base64>";` and one export line: the base64 is between its two quotes.
  const read =
    `// ${MARK} (packages/db/bin/generated-client-patch.js): import() would keep its source and string for good\n` +
    `    const source = require('node:fs').readFileSync(require.resolve("${found[1]}"), 'utf8')\n` +
    `    const start = source.indexOf('"') + 1\n` +
    `    const wasm = source.slice(start, source.indexOf('"', start))`;
  return text.replace(found[0], read);
}

/** Patches the clients a schema generates (`output` of each `prisma-client` generator, relative to the schema). */
function patchGeneratedClients(schemaPath) {
  const schema = fs.readFileSync(schemaPath, 'utf8');
  for (const block of schema.matchAll(/generator\s+\w+\s*\{([^}]*)\}/g)) {
    if (!/provider\s*=\s*"prisma-client"/.test(block[1])) continue;
    const output = /output\s*=\s*"([^"]+)"/.exec(block[1]);
    if (!output) continue;
    const file = path.join(path.dirname(schemaPath), output[1], 'internal', 'class.ts');
    fs.writeFileSync(file, patchClientText(fs.readFileSync(file, 'utf8'), file));
  }
}

module.exports = { patchClientText, patchGeneratedClients };
