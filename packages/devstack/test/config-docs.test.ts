import { spawnSync } from 'node:child_process';
import path from 'node:path';

// docs/configuration.md is written from the services' config schemas and the launcher's variable
// list by scripts/config-docs.js; a schema changed without the page (or the page edited by hand)
// fails here, so the page cannot drift from what the services read. The script reads the built
// schemas, which turbo builds before this package's tests.
const repoRoot = path.resolve(__dirname, '../../..');

describe('docs/configuration.md', () => {
  test('When the page is generated from the config schemas again, then it is exactly the committed page', () => {
    const check = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/config-docs.js'), '--check'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
