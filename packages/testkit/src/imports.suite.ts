import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const RULES = path.join(__dirname, '..', 'import-rules.cjs');
const CRUISE = path.join(__dirname, '..', 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Cruise {
  summary: {
    violations: { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }[];
    totalCruised: number;
  };
}

/**
 * The import rules (import-rules.cjs) checked by dependency-cruiser over `srcDir`: each violation as
 * `rule: from → to` (a cycle as its modules in order), and how many modules were read.
 */
export function importViolations(srcDir: string): { violations: string[]; modules: number } {
  const run = spawnSync(process.execPath, [CRUISE, '--config', RULES, '--output-type', 'json', '.'], {
    cwd: srcDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!run.stdout) throw new Error(`dependency-cruiser failed: ${run.stderr}`);
  const { summary } = JSON.parse(run.stdout) as Cruise;
  const violations = summary.violations.map(
    ({ rule, from, to, cycle }) =>
      `${rule.name}: ${from} → ${cycle?.length ? cycle.map((step) => step.name).join(' → ') : to}`,
  );
  return { violations, modules: summary.totalCruised };
}

/**
 * The way data and events flow through a service, read from its imports (README, architecture):
 * no two modules import each other round a circle; a schema file imports no repository; a
 * repository neither builds API JSON (`*.mapper.ts`) nor records events on its own (the event
 * catalogue, `events/*-events.ts`): the service decides which event a change makes and records it
 * in the repository's transaction.
 */
export function describeImportRules(srcDir: string) {
  describe('The imports of src/', () => {
    test(
      'When the modules are read, then none imports another round a circle, no schema ' +
        'imports a repository, no repository a mapper or an event catalogue',
      () => {
        const { violations, modules } = importViolations(srcDir);
        expect(modules).toBeGreaterThan(10);
        expect(violations).toEqual([]);
      },
    );

    test('When two modules import each other, or a schema a repository, then the rules report it', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-rules-'));
      try {
        fs.mkdirSync(path.join(dir, 'things'));
        fs.writeFileSync(path.join(dir, 'things', 'a.ts'), "import { b } from './b';\nexport const a = () => b;\n");
        fs.writeFileSync(path.join(dir, 'things', 'b.ts'), "import { a } from './a';\nexport const b = () => a;\n");
        fs.writeFileSync(path.join(dir, 'things', 'things.repository.ts'), 'export const rows = [];\n');
        fs.writeFileSync(
          path.join(dir, 'things', 'things.schemas.ts'),
          "import type { rows } from './things.repository';\nexport type Rows = typeof rows;\n",
        );
        expect(importViolations(dir).violations.sort()).toEqual([
          'no-circular: things/a.ts → things/b.ts → things/a.ts',
          'schema-imports-no-repository: things/things.schemas.ts → things/things.repository.ts',
        ]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
