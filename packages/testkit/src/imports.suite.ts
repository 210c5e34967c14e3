import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * A service's own modules (under `srcDir`, Prisma's generated client left out) and, for each, the
 * ones of them it imports, as paths relative to `srcDir`. Type-only imports count: they tie two
 * files together as much as any (a schema that names a repository's type has to change with it).
 */
export function importGraph(srcDir: string): Map<string, string[]> {
  const files = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'generated') walk(full);
      else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.add(full);
    }
  };
  walk(srcDir);
  const resolve = (from: string, specifier: string) =>
    [`${specifier}.ts`, `${specifier}/index.ts`].map((candidate) => path.resolve(path.dirname(from), candidate)).find((file) => files.has(file));
  const graph = new Map<string, string[]>();
  for (const file of [...files].sort()) {
    const imported = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles.map((ref) => ref.fileName);
    const targets = imported.filter((specifier) => specifier.startsWith('.')).map((specifier) => resolve(file, specifier));
    const relative = (target: string) => path.relative(srcDir, target).split(path.sep).join('/');
    graph.set(relative(file), [...new Set(targets.filter((target): target is string => target !== undefined).map(relative))]);
  }
  return graph;
}

/**
 * The groups of modules that import each other round a circle (Tarjan's strongly connected
 * components of more than one module, or a module that imports itself), each sorted.
 */
export function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || graph.get(file)?.includes(file)) cycles.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

const imports = (graph: Map<string, string[]>, from: (file: string) => boolean, to: (file: string) => boolean) =>
  [...graph].flatMap(([file, targets]) => (from(file) ? targets.filter(to).map((target) => `${file} → ${target}`) : []));

/**
 * The way data and events flow through a service, read from its imports (README, architecture):
 * no two modules import each other round a circle; a schema file imports no repository; a
 * repository neither builds API JSON (`*.mapper.ts`) nor records events on its own (the event
 * catalogue, `events/*-events.ts`): the service decides which event a change makes and records it
 * in the repository's transaction.
 */
export function describeImportRules(srcDir: string) {
  describe('The imports of src/', () => {
    const graph = importGraph(srcDir);

    test('When the modules are read, then none imports another that imports it back, directly or round a circle', () => {
      expect(graph.size).toBeGreaterThan(10);
      expect(importCycles(graph)).toEqual([]);
    });

    test('When a schema file is read, then it imports no repository', () => {
      expect(imports(graph, (file) => file.endsWith('.schemas.ts'), (file) => file.endsWith('.repository.ts'))).toEqual([]);
    });

    test('When a repository is read, then it imports neither an API JSON mapper nor an event catalogue', () => {
      const repository = (file: string) => file.endsWith('.repository.ts') && !file.startsWith('events/');
      expect(imports(graph, repository, (file) => file.endsWith('.mapper.ts') || /^events\/[^/]+-events\.ts$/.test(file))).toEqual([]);
    });
  });
}
