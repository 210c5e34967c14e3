import fs from 'node:fs';
import path from 'node:path';

/**
 * The repository root is found from this file's location, never from the
 * current directory, so `node packages/devstack/dist/cli.js` works from
 * anywhere (a subfolder, an IDE, a script).
 */
export function findRepoRoot(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`no pnpm-workspace.yaml above ${startDir}: is @msp/devstack inside the monorepo?`);
    }
    dir = parent;
  }
}
