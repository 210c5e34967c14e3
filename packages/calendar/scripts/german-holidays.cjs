'use strict';
// Writes data/german-holidays.json: Germany's part of date-holidays' data (its rules for the whole
// country and each state, and the shared holiday names they refer to), for date-holidays-parser to
// read at run time. date-holidays itself carries the rules of every country in one module, ~8 MB
// of heap and ~14 MB of RSS in desk once a holiday is asked for (bench/README.md, "Memory"), of
// which Germany's are 6 KB. Run after upgrading date-holidays (devDependency):
//   pnpm --filter @msp/calendar holidays:data
// test/holidays.test.ts fails while the file differs from what this writes.
const fs = require('node:fs');
const path = require('node:path');

const FILE = path.join(__dirname, '..', 'data', 'german-holidays.json');

/** date-holidays' data with only Germany's rules (and every shared name: 24 KB, no picking to get wrong). */
function germanHolidayData() {
  // The package's exports map names only its entry; its data module sits beside that entry.
  const { data } = require(path.join(path.dirname(require.resolve('date-holidays')), 'data.cjs'));
  return { version: data.version, license: data.license, holidays: { DE: data.holidays.DE }, names: data.names };
}

function text() {
  return `${JSON.stringify(germanHolidayData(), null, 1)}\n`;
}

if (require.main === module) {
  fs.writeFileSync(FILE, text());
  console.log(`wrote ${path.relative(process.cwd(), FILE)} (date-holidays data ${germanHolidayData().version})`);
}

module.exports = { FILE, text };
