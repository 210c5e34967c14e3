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

const run = spawnSync('pnpm', ['exec', 'turbo', 'run', 'typecheck', 'lint', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)], {
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
});

let passed = 0;
let failed = 0;
let skipped = 0;
const suites = [];
for (const file of fs.readdirSync(resultsDir).filter((f) => f.endsWith('.json'))) {
  const result = JSON.parse(fs.readFileSync(path.join(resultsDir, file), 'utf8'));
  passed += result.numPassedTests;
  failed += result.numFailedTests;
  skipped += result.numPendingTests + (result.numTodoTests ?? 0);
  suites.push(`${file.replace(/\.json$/, '')}: ${result.numPassedTests} passed, ${result.numFailedTests} failed`);
}
console.log(`\n${suites.join('\n')}`);
const code = run.status ?? 1;
if (code !== 0 && failed === 0) failed = 1; // a package that crashed before reporting still fails the run
console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code);
