const preset = require('../../jest.preset.js');

// pg-boss and the libraries it loads are ES modules only: transformed to CommonJS like jose (and
// email-reply-parser, which desk loads when link's tests start it).
const esm = [
  'jose',
  'oauth4webapi',
  'email-reply-parser',
  'pg-boss',
  'serialize-error',
  'non-error',
  'cron-parser',
  'rrule-temporal',
  'temporal-polyfill',
  'temporal-spec',
  'luxon',
];

// link must answer the same whatever the process's time zone; its tests run far east of UTC, where
// a date read as a local midnight is the day before in UTC (run-list-pages.test.ts). Set here, in
// the process that starts the workers, which inherit it (a test's own process.env is a copy).
process.env.TZ = 'Pacific/Kiritimati';

module.exports = {
  ...preset,
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${esm.join('|')})[@/])`],
};
