import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

// bin/generated-client-patch.js (run by `msp-prisma generate`): the generated client reads Prisma's
// query compiler from its base64 file instead of import()ing it, which kept the module's 2.3 MB
// source and its 2.3 MB string for the life of the process.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { patchClientText } = require('../bin/generated-client-patch.js') as { patchClientText(text: string, file?: string): string };

// (This package's types have no WebAssembly namespace.)
const WasmModule = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } }).WebAssembly.Module;

const SPECIFIER = '@prisma/client/runtime/query_compiler_small_bg.postgresql.wasm-base64.js';
// What Prisma 7 generates into internal/class.ts (compilerBuild "small").
const GENERATED = `config.compilerWasm = {
  getRuntime: async () => await import("@prisma/client/runtime/query_compiler_small_bg.postgresql.js"),

  getQueryCompilerWasmModule: async () => {
    const { wasm } = await import("${SPECIFIER}")
    return await decodeBase64AsWasm(wasm)
  },
}`;

/** The patched getQueryCompilerWasmModule's body up to its `wasm`, run with `require` of a folder that holds the base64 file. */
function wasmReadBy(patched: string, root: string): string {
  const body = /getQueryCompilerWasmModule: async \(\) => \{\n([\s\S]*?)\n\s*return await decodeBase64AsWasm\(wasm\)/.exec(patched)![1]!;
  return new Function('require', `${body}\nreturn wasm`)(createRequire(path.join(root, 'index.js'))) as string;
}

test('When the generated loader is patched, then it reads the base64 from the file import() would load, and the bytes compile', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-wasm-'));
  try {
    const file = path.join(root, 'node_modules', SPECIFIER);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // The shape of Prisma's file: the literal, then the export. The smallest module: magic and version.
    const base64 = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]).toString('base64');
    fs.writeFileSync(file, `const wasm = "${base64}";\nmodule.exports = { wasm }\n`);

    const patched = patchClientText(GENERATED);
    expect(patched).not.toContain(`await import("${SPECIFIER}")`);
    expect(patched).toContain(`await import("@prisma/client/runtime/query_compiler_small_bg.postgresql.js")`);
    const wasm = wasmReadBy(patched, root);
    expect(wasm).toBe(base64);
    expect(new WasmModule(Buffer.from(wasm, 'base64'))).toBeInstanceOf(WasmModule);
    expect(patchClientText(patched)).toBe(patched);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('When the generated client has no loader of the expected shape (a Prisma upgrade), then generate fails and says where to adapt', () => {
  expect(() => patchClientText('config.compilerWasm = { getQueryCompilerWasmModule: async () => load() }', 'src/generated/prisma/internal/class.ts')).toThrow(
    /src\/generated\/prisma\/internal\/class\.ts: Prisma's loader of its query compiler .* packages\/db\/bin\/generated-client-patch\.js/,
  );
});
