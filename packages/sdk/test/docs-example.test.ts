import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';

const DOCS = path.resolve(__dirname, '../../../docs/sdk.md');

test('When the ten lines of docs/sdk.md are compiled against the SDK, then TypeScript finds no error', () => {
  const example = /```ts\n([\s\S]*?)```/.exec(readFileSync(DOCS, 'utf8'))?.[1];
  expect(example).toBeDefined();
  // The page's lines as an integrator's module: the imports first, the rest in an async function
  // given the client's id and secret.
  const lines = example!.trimEnd().split('\n');
  const imports = lines.filter((line) => line.startsWith('import '));
  const body = lines.filter((line) => !line.startsWith('import '));
  const source = [
    ...imports,
    'export async function integrate(clientId: string, clientSecret: string) {',
    ...body,
    '}',
    '',
  ].join('\n');
  const dir = mkdtempSync(path.join(tmpdir(), 'sdk-docs-example-'));
  try {
    const file = path.join(dir, 'example.ts');
    writeFileSync(file, source);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2023,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.asynciterable.d.ts'],
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      types: ['node'],
      typeRoots: [path.resolve(__dirname, '../node_modules/@types')],
      baseUrl: dir,
      paths: { '@msp/sdk': [path.resolve(__dirname, '../src/index.ts')] },
      skipLibCheck: true,
    });
    const errors = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file ? path.basename(diagnostic.file.fileName) : '';
      return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
    expect(errors).toEqual([]);
    expect(body.length + imports.length).toBeLessThanOrEqual(12);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
