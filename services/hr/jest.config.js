module.exports = {
  ...require('../../jest.preset.js'),
  // Each test fails on any answer of hr that its served OpenAPI document does not describe.
  setupFilesAfterEnv: ['<rootDir>/test/support/conformance-setup.ts'],
};
