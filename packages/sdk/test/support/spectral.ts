import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SPECTRAL = path.resolve(__dirname, '../../node_modules/.bin/spectral');
/** The repository's ruleset: Spectral's OpenAPI rules, OWASP's, and the waivers with their reasons. */
export const RULESET = path.resolve(__dirname, '../../../../.spectral.yaml');

const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;

export interface Finding {
  document: string;
  severity: (typeof SEVERITIES)[number];
  code: string;
  /** JSON pointer-ish path of what was found, `/`-joined. */
  path: string;
  message: string;
}

/**
 * Lints OpenAPI documents with Spectral's CLI and the repository's ruleset, each written to
 * `<name>.json` (the name the ruleset's overrides see), and answers every finding, whatever its
 * severity. Spectral runs offline: the rulesets are installed packages.
 */
export async function lintWithSpectral(documents: Record<string, unknown>): Promise<Finding[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'spectral-'));
  try {
    const files = Object.entries(documents).map(([name, document]) => {
      const file = path.join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(document, null, 2));
      return file;
    });
    // Exit code 1 means "found errors": the report is on stdout either way.
    const { stdout, stderr } = await run(
      SPECTRAL,
      ['lint', ...files, '--ruleset', RULESET, '--format', 'json', '--quiet'],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }));
    let report: { code: string; severity: number; path: (string | number)[]; message: string; source: string }[];
    try {
      report = JSON.parse(stdout);
    } catch {
      throw new Error(`Spectral gave no report:\n${stderr}\n${stdout}`);
    }
    return report.map((finding) => ({
      document: path.basename(finding.source, '.json'),
      severity: SEVERITIES[finding.severity] ?? 'error',
      code: finding.code,
      path: finding.path.join('/'),
      message: finding.message,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
