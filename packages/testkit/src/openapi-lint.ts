import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE_DIR = path.resolve(__dirname, '..');

/**
 * Lints an OpenAPI document with Redocly's recommended rules and answers the
 * errors ("<pointer>: <message>"), none when it is valid. Offline by
 * configuration: telemetry off, no update check.
 */
export async function lintOpenApi(document: unknown): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const { stdout } = await run(
      path.join(PACKAGE_DIR, 'node_modules/.bin/redocly'),
      ['lint', file, '--config', path.join(PACKAGE_DIR, 'redocly.yaml'), '--format=json'],
      {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as {
      problems: { severity: string; message: string; location: { pointer: string }[] }[];
    };
    return report.problems.filter((p) => p.severity === 'error').map((p) => `${p.location[0]?.pointer}: ${p.message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
