const preset = require('../../jest.preset.js');

// email-reply-parser is an ES module only, and reads import.meta.url: compiled like the preset's
// ES-module libraries, through a transform that gives it its URL (test/support/import-meta-transform.js).
module.exports = {
  ...preset,
  transform: { '/email-reply-parser/.+\\.js$': '<rootDir>/test/support/import-meta-transform.js', ...preset.transform },
  transformIgnorePatterns: preset.transformIgnorePatterns.map((pattern) =>
    pattern.replace('(?!(\\.pnpm/)?(', '(?!(\\.pnpm/)?(email-reply-parser|'),
  ),
};
