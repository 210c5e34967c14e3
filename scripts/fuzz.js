#!/usr/bin/env node
// `pnpm fuzz`: every operation of desk, link and hr fuzzed from its OpenAPI document
// (packages/testkit/src/fuzz.suite.ts), 10,000 inputs per write operation and 1,000 per read
// (FUZZ_RUNS / FUZZ_READ_RUNS override), against the machine's PostgreSQL and Redis like
// `pnpm test`. Writes the figures to bench/results/latest-fuzz.md (+ a dated JSON) and exits
// non-zero when any operation failed; the seed of the run is printed and FUZZ_SEED replays it.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const services = ['desk', 'link', 'hr'];
const runs = process.env.FUZZ_RUNS ?? '10000';
const readRuns = process.env.FUZZ_READ_RUNS ?? '1000';
const seed = process.env.FUZZ_SEED ?? String(Date.now() % 2 ** 31);
const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzz-'));

console.log(
  `fuzz: ${runs} inputs per write operation, ${readRuns} per read, seed ${seed} (FUZZ_SEED=${seed} replays it)`,
);
const started = Date.now();
const exitCodes = {};
for (const service of services) {
  console.log(`\n== ${service}`);
  const result = spawnSync(
    'pnpm',
    ['exec', 'jest', 'test/fuzz.test.ts', '--json', `--outputFile=${path.join(reportDir, `${service}-jest.json`)}`],
    {
      cwd: path.join(root, 'services', service),
      stdio: 'inherit',
      env: {
        ...process.env,
        FUZZ_RUNS: runs,
        FUZZ_READ_RUNS: readRuns,
        FUZZ_SEED: seed,
        FUZZ_REPORT_DIR: reportDir,
        FUZZ_TIMEOUT_MS: String(6 * 3600 * 1000),
      },
    },
  );
  exitCodes[service] = result.status;
}

const reports = services.map((service) => {
  const file = path.join(reportDir, `${service}.json`);
  return fs.existsSync(file)
    ? JSON.parse(fs.readFileSync(file, 'utf8'))
    : { service, failures: [`no report (jest exited ${exitCodes[service]})`], figures: [] };
});
const total = reports.reduce((sum, report) => sum + report.figures.reduce((n, f) => n + f.runs, 0), 0);
const failures = reports.flatMap((report) => report.failures.map((failure) => `${report.service}: ${failure}`));
const minutes = ((Date.now() - started) / 60000).toFixed(1);

const lines = [
  '# Fuzzing (latest `pnpm fuzz`)',
  '',
  `Run ${new Date().toISOString()} on ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}: ` +
    `${runs} inputs per write operation, ${readRuns} per read, seed ${seed}; ${total.toLocaleString('en')} requests in ${minutes} min.`,
  '',
  "Each input is the operation's documented example mutated off its schema (wrong types, missing and extra fields, huge strings and numbers, unicode edge cases, malformed JSON, wrong content types, path ids that are not UUIDs, junk query parameters). " +
    'Checked for every response: no 5xx, errors are problem documents, status/content type/body match the OpenAPI document, and a rejected write changed no table.',
  '',
  `**Failures: ${failures.length}.**`,
  ...failures.map((failure) => `- ${failure.replace(/\n/g, ' ')}`),
  '',
];
for (const report of reports) {
  lines.push(
    `## ${report.service}`,
    '',
    '| operation | inputs | answers (status: count) | seconds |',
    '|---|---:|---|---:|',
  );
  for (const figure of report.figures) {
    const statuses = Object.entries(figure.statuses)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    lines.push(`| \`${figure.operation}\` | ${figure.runs} | ${statuses} | ${(figure.ms / 1000).toFixed(1)} |`);
  }
  lines.push('');
}
const resultsDir = path.join(root, 'bench/results');
fs.mkdirSync(resultsDir, { recursive: true });
fs.writeFileSync(path.join(resultsDir, 'latest-fuzz.md'), lines.join('\n'));
fs.writeFileSync(
  path.join(resultsDir, `${new Date().toISOString().slice(0, 10)}-fuzz.json`),
  JSON.stringify({ runs, readRuns, seed, minutes, reports }, null, 2),
);
console.log(
  `\nfuzz: ${total} requests, ${failures.length} failures, ${minutes} min; figures in bench/results/latest-fuzz.md`,
);
process.exit(failures.length || Object.values(exitCodes).some((code) => code !== 0) ? 1 : 0);
