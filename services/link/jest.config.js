const preset = require('../../jest.preset.js');

// pg-boss and the libraries it loads are ES modules only: transformed to CommonJS like jose.
const esm = ['jose', 'oauth4webapi', 'pg-boss', 'serialize-error', 'non-error', 'cron-parser', 'rrule-temporal', 'temporal-polyfill', 'temporal-spec', 'luxon'];

module.exports = {
  ...preset,
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${esm.join('|')})[@/])`],
};
