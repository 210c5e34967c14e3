import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The `prisma` folder of the package that contains `fromDir`: the nearest ancestor holding
 * `prisma/schema.prisma`. Pass `__dirname`; the answer is the same from src/ (jest, ts) and from
 * dist/ (built), at any depth, as long as `prisma/` ships beside the code.
 */
export function prismaDirOf(fromDir: string): string {
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'prisma');
    if (existsSync(path.join(candidate, 'schema.prisma'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`No prisma/schema.prisma found above ${fromDir}.`);
  }
}

/** `<package>/prisma/migrations` for the package containing `fromDir` (pass `__dirname`). */
export function migrationsDirOf(fromDir: string): string {
  return path.join(prismaDirOf(fromDir), 'migrations');
}
