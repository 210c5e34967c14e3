import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const DESK_ROOT = path.resolve(__dirname, '../..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * Tests that run desk's built commands (dist/) as child processes build it first when it is
 * missing or older than src/ (`pnpm test` builds only the packages desk depends on). The build is
 * serialized by a lock file, so two test files never write dist/ at the same time.
 */
/** Another service's dist (hr, for tests that run it beside desk), built through turbo (it generates its Prisma client) when missing or stale. */
export function ensureBuiltService(name: 'hr' | 'link'): string {
  const root = path.resolve(DESK_ROOT, '..', name);
  const marker = path.join(root, 'dist/index.js');
  if (!fs.existsSync(marker) || fs.statSync(marker).mtimeMs < newestMtime(path.join(root, 'src'))) {
    execFileSync('flock', [`/tmp/msp-${name}-test-build.lock`, 'pnpm', 'exec', 'turbo', 'run', 'build', `--filter=@msp/${name}`, '--output-logs=errors-only'], {
      cwd: root,
      stdio: 'inherit',
    });
  }
  return path.join(root, 'dist');
}

export function ensureBuiltDesk(): string {
  const marker = path.join(DESK_ROOT, 'dist/cli/tenant-create.js');
  const fresh = () => fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= newestMtime(path.join(DESK_ROOT, 'src'));
  if (!fresh()) {
    execFileSync('flock', ['/tmp/msp-desk-test-build.lock', 'sh', '-c', `test -f "${marker}" && [ "$(find src -newer "${marker}" -type f | head -1)" = "" ] || npx tsc -p tsconfig.build.json`], {
      cwd: DESK_ROOT,
      stdio: 'inherit',
    });
  }
  return path.join(DESK_ROOT, 'dist');
}
