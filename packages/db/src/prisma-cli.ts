import { spawn } from 'node:child_process';
import path from 'node:path';

/** bin/prisma.js: the pinned Prisma CLI wired to the WebAssembly schema engine stand-in. */
export const PRISMA_BIN = path.join(__dirname, '..', 'bin', 'prisma.js');

export interface PrismaCliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the Prisma CLI (through bin/prisma.js) and collects its output; a non-zero exit code is
 * returned, not thrown, because some commands use it as an answer (`migrate diff --exit-code`).
 * The CLI finds prisma.config.ts in `cwd`.
 */
export function runPrismaCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<PrismaCliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PRISMA_BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ exitCode: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}
