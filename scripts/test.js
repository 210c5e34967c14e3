#!/usr/bin/env node
// Runs every package's typecheck, lint and tests through turbo, then prints one closing line that
// sums them all ("Tests: N passed, N failed"), which CI reads. Exit code is turbo's.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const resultsDir = path.join(root, 'test-results');
fs.rmSync(resultsDir, { recursive: true, force: true });
fs.mkdirSync(resultsDir, { recursive: true });

const run = spawnSync(
  'pnpm',
  ['exec', 'turbo', 'run', 'typecheck', 'lint', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)],
  {
    cwd: root,
    stdio: 'inherit',
    // On two CPUs Jest runs a package's files in its own process, one after the other, and that
    // process keeps some of every file's module graph: desk's and link's suites outgrew V8's default
    // heap once the mail and directory clients joined them.
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=8192`.trim(),
      JEST_RESULTS_DIR: resultsDir,
      TURBO_TELEMETRY_DISABLED: '1',
      TURBO_NO_UPDATE_NOTIFIER: '1',
    },
  },
);

let passed = 0;
let failed = 0;
let skipped = 0;
const suites = [];
const failures = [];

/** Each failed test's file, title and the head of its message: CI's log keeps only the end of the run. */
function failuresOf(result) {
  const lines = [];
  for (const suite of result.testResults ?? []) {
    const file = path.relative(root, suite.name);
    if (suite.status === 'failed' && !(suite.assertionResults ?? []).some((t) => t.status === 'failed')) {
      lines.push(`FAILED ${file}\n${(suite.message ?? '').split('\n').slice(0, 12).join('\n')}`);
    }
    for (const test of suite.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const message = (test.failureMessages ?? []).join('\n').split('\n').slice(0, 12).join('\n');
      lines.push(`FAILED ${file} › ${test.fullName}\n${message}`);
    }
  }
  return lines;
}
for (const file of fs.readdirSync(resultsDir).filter((f) => f.endsWith('.json'))) {
  const result = JSON.parse(fs.readFileSync(path.join(resultsDir, file), 'utf8'));
  passed += result.numPassedTests;
  failed += result.numFailedTests;
  skipped += result.numPendingTests + (result.numTodoTests ?? 0);
  suites.push(`${file.replace(/\.json$/, '')}: ${result.numPassedTests} passed, ${result.numFailedTests} failed`);
  failures.push(...failuresOf(result));
}
if (failures.length > 0) console.log(`\n${failures.join('\n\n')}`);
console.log(`\n${suites.join('\n')}`);
const code = run.status ?? 1;
if (code !== 0 && failed === 0) failed = 1; // a package that crashed before reporting still fails the run
console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code);
